/** The chat's host side: sends turns, folds events into state, answers approvals and questions. */
import type { AgentPort } from '../client';
import {
  PERMISSION_WITHDRAWN,
  Requests,
  type BranchInfo,
  type CheckoutResult,
  type Checkpoint,
  type EventParams,
  type ForkParams,
  type HistoryResult,
  type PermissionOutcome,
  type PermissionParams,
  type QuestionOutcome,
  type QuestionParams,
  type SessionInfo,
  type TurnResult,
} from '../protocol';
import { traceError } from '../log';
import type { HostMessage, PageMessage } from '../webview/messages';
import { EditReviews, type ReviewAnswer } from './review';
import { cardKey, initialState, pendingApprovals, reduce, withdrawnReason, type ChatState, type PanelSettings } from '../webview/state';
import { PERMISSION_MODES } from '../settings';
import { firstAnswer } from './settle';
import { symbolPicks } from '../context/symbols';
import { approvalMessage } from '../mcp';
import * as api from '../vscodeapi';
import { nextToUndo, notRestoredNote } from '../checkpoints/undo';
import { decide, describeSwitch, keptNote, ownChanges, ownChangesQuestion, ownPath, type Choice } from '../branches/switchCode';
import { sessionTitle } from '../branches/label';
import type { SwitchCode } from '../settings';
import { Attachments, type ContextItem, type FileRef, type ImageRef } from '../context/attachments';
import type { CommandInfo, CommandsResult, FilesResult, RestoreResult } from '../protocol';
import type { BranchDiffResult, SubscribeResult } from '../wire';
import { withoutRunningTurn } from './reattach';
import { classify, commandCompletions, EDITOR_BUILTINS, modeArgument, parseSlash, unknownMessage, type EditorBuiltin } from './slash';
import type { CompletionKind } from '../webview/messages';

const SESSION_KEY = 'openprogram.sessionId';
/** The turn checkpoints `/undo` undid, per session (the next `/undo` goes further back). */

/** How branch switches treat the code: the setting and the once-asked question. */
export interface CodeSwitching {
  setting(): SwitchCode;
  ask(choices: Choice[]): Thenable<Choice | undefined>;
  /** Files with the user's own changes would be replaced: switch them too, keep them (the rest
   *  switches), choose file by file, or (when `cancellable`) do nothing; a dismissed question is a
   *  cancel, else a keep. */
  askOwn(message: string, detail: string, cancellable: boolean): Promise<'switch' | 'keep' | 'choose' | 'cancel'>;
  /** Of the files with the user's own changes, those to switch too (undefined: dismissed). */
  chooseOwn(files: string[]): Promise<string[] | undefined>;
}

const DEFAULT_SWITCHING: CodeSwitching = {
  setting: () => (api.getConfiguration('openprogram').get<SwitchCode>('switchCode') ?? 'ask'),
  ask: (choices) => api.showQuickPick(choices.map((c) => ({ ...c, label: c.label })), {
    placeHolder: "Switching branch: also bring the workspace's files to that branch's code?",
    ignoreFocusOut: true,
  }),
  askOwn: async (message, detail, cancellable) => {
    const answer = await api.askModal(message, detail, 'Switch Them Too', 'Keep My Changes', 'Choose Files…');
    if (answer === 'Switch Them Too') return 'switch';
    if (answer === 'Choose Files…') return 'choose';
    return answer === 'Keep My Changes' || !cancellable ? 'keep' : 'cancel';
  },
  chooseOwn: async (files) => {
    const picked = await api.showQuickPickMany(
      files.map((label) => ({ label, description: "your change: check to replace it with the branch's code" })),
      "Your own changes: check the files the branch's code replaces (the others stay as they are)",
    );
    return picked?.map((p) => p.label);
  },
};

/** Where host messages go: the webview, when it exists. */
export interface ChatSink {
  post(msg: HostMessage): void;
  readonly visible: boolean;
}

/** Events held while a session's history loads, and the prompts waiting for them. */
interface Held {
  sessionId: string;
  events: EventParams[];
  released: Promise<void>;
  done: () => void;
}

/** State and actions of the chat, independent of whether the panel is open. */
export class ChatController {
  state: ChatState = initialState();
  /** The active file, selections (and their diagnostics) and files queued for the next message. */
  readonly attachments = new Attachments();
  /** The server's slash commands, fetched when the input needs them (kept a few seconds). */
  private commandList: { at: number; list: CommandInfo[] } | null = null;
  private sink: ChatSink | undefined;
  private inflight: api.CancellationTokenSource | null = null;
  /** Settles when the panel's own turn's request has its answer. */
  private inflightDone: Promise<void> | null = null;
  private loadingOlder = false;
  /** Messages fetched at a time: the last page when a session opens, older ones on scroll. */
  historyPage = 200;
  private nextRequest = 0;
  /** Approvals asked by notification (panel hidden), by turn id + tool call id, until they settle. */
  private readonly notified = new Map<string, string>();
  private readonly pending = new Map<string, (value: string | null) => void>();
  /** Open approvals by request id: what they are about (the diff editor's review needs it). */
  private readonly prompts = new Map<string, PermissionParams>();
  /** The hunks a review accepted, for the answer about to be given (absent: the whole edit). */
  private readonly acceptedHunks = new Map<string, number[]>();
  /** The answer to "bring the code?" asked when Fork was clicked, for the fork sent next. */
  private forkAnswer: { nodeId: string | null; restore: Promise<boolean> } | undefined;
  /** Pending edits opened in the diff editor for review, hunk by hunk. */
  readonly reviews = new EditReviews((requestId, answer) => this.answerReview(requestId, answer));
  private readonly turnsFinished = new api.EventEmitter<string>();
  private readonly changes = new api.EventEmitter<ChatState>();
  /** Fires with the new state after every change (status bar, badge, context keys follow it). */
  readonly onDidChange = this.changes.event;
  /** Fires with the session id after every turn and when a chat binds a new session (trees refresh). */
  readonly onTurnFinished = this.turnsFinished.event;

  /** The last switch that changed files (Undo Branch Switch). */
  lastSwitch: { sessionId: string; safety: string; previous: string | null } | null = null;

  constructor(
    private readonly client: AgentPort,
    private readonly memento: api.Memento,
    private readonly switching: CodeSwitching = DEFAULT_SWITCHING,
  ) {
    this.state = { ...this.state, sessionId: memento.get<string>(SESSION_KEY) ?? null };
    client.onEvent((e) => this.onEvent(e));
    client.onState(({ state, detail }) => {
      this.post({ type: 'status', server: state, detail });
      if (state === 'running' && this.state.sessionId && !this.busy) {
        void this.loadSession(this.state.sessionId);
      } else if (state === 'running' && !this.busy) {
        // a window with no session of its own (a second window on the workspace): the
        // workspace's running session, so its turn shows here too
        void this.runningSession().then((sid) => {
          if (sid && this.state.sessionId === null && !this.busy) void this.loadSession(sid);
        });
      }
    });
    client.permissionHandler = (p, token) => this.askPermission(p, token);
    client.questionHandler = (p, token) => this.askQuestion(p, token);
  }

  get busy(): boolean {
    return this.inflight !== null;
  }

  /** Connect (or disconnect) the webview. */
  attach(sink: ChatSink | undefined): void {
    this.sink = sink;
  }

  /** Handle a message from the page. */
  async onPageMessage(msg: PageMessage): Promise<void> {
    switch (msg.type) {
      case 'ready':
        this.resync();
        return;
      case 'send':
        // editing a message into a fork sends it as it is; the input's text may be a command
        return msg.forkFrom === undefined ? this.submit(msg.text) : this.send(msg.text, msg.forkFrom, msg.forkName);
      case 'cancel':
        return this.cancel();
      case 'newSession':
        return this.newSession();
      case 'loadOlder':
        return this.loadOlder();
      case 'permissionReply':
      case 'questionReply': {
        const value = msg.type === 'permissionReply' ? msg.optionId : msg.answer;
        this.pending.get(msg.requestId)?.(value);
        return;
      }
      case 'checkout':
        return this.checkout(msg.headId);
      case 'openFile':
        return api.openWorkspaceFile(String(msg.path), typeof msg.line === 'number' ? msg.line : undefined);
      case 'openLink':
        return api.openWebLink(String(msg.url));
      case 'copyCode':
        return api.copyText(String(msg.text));
      case 'insertCode':
        return api.insertAtCursor(String(msg.text));
      case 'forkStarted':
        this.forkAnswer = { nodeId: msg.nodeId ?? null, restore: this.forkCode() };
        return;
      case 'reviewEdit':
        return this.reviewEdit(String(msg.requestId));
      case 'applyCode':
        return api.applyCodeBlock(String(msg.text), typeof msg.path === 'string' ? msg.path : undefined);
      case 'showCheckpoint':
        await api.executeCommand('openprogram.showCheckpointDiff', { checkpointId: msg.checkpointId });
        return;
      case 'setMode':
        await this.setMode(msg.mode);
        return;
      case 'listSessions':
        return this.listSessions();
      case 'openSession':
        await this.loadSession(msg.sessionId);
        this.turnsFinished.fire(msg.sessionId);
        return;
      case 'renameSession':
        return this.renameSession(msg.sessionId);
      case 'deleteSession':
        return this.deleteSession(msg.sessionId);
      case 'pickModel':
        await api.executeCommand('openprogram.pickModel');
        return;
      case 'restartServer':
        await api.executeCommand('openprogram.restartServer');
        return;
      case 'openSettings':
        await api.executeCommand('workbench.action.openSettings', 'openprogram.server');
        return;
      case 'focus':
        void api.setContext('openprogram.chatFocused', msg.focused);
        return;
      case 'removeAttachment':
        this.attachments.remove(msg.id);
        this.postChips();
        return;
      case 'attachFile':
        this.attachments.addFile({ uri: msg.uri, path: msg.path });
        this.postChips();
        return;
      case 'attachImage': // pasted or dropped into the panel
        this.addImages([{ uri: `clipboard:${msg.name}`, name: msg.name, data: msg.data, mediaType: msg.mediaType }]);
        return;
      case 'pickImages':
        await api.executeCommand('openprogram.attachImage');
        return;
      case 'pickSymbol':
        await api.executeCommand('openprogram.addSymbol');
        return;
      case 'loadImage':
        return this.loadImage(msg.sha256);
      case 'complete':
        return this.complete(msg.requestId, msg.kind, msg.query);
    }
  }

  private shownChips = '';

  /** Show the chips of what goes with the next message (when they changed). */
  private postChips(): void {
    const chips = this.attachments.chips();
    const key = JSON.stringify(chips);
    if (key === this.shownChips) return;
    this.shownChips = key;
    this.post({ type: 'attachments', chips });
  }

  /** The editor's active file changed: its chip follows (null: no file editor is active). */
  setActiveFile(file: FileRef | null): void {
    this.attachments.setActive(file);
    this.postChips();
  }

  /** Answer the input's `@` (workspace files) or `/` (commands) popup. */
  private async complete(requestId: number, kind: CompletionKind, query: string): Promise<void> {
    try {
      if (kind === 'files') {
        const { files } = await this.client.request<FilesResult>(Requests.files, { query, limit: 30 });
        this.post({ type: 'completions', requestId, kind, items: files.map((f) => ({ label: f.path, insert: `@${f.path} `, uri: f.uri })) });
      } else {
        this.post({ type: 'completions', requestId, kind, items: commandCompletions(await this.commands(), query) });
      }
    } catch (err) {
      traceError(`completing ${kind} failed:`, err);
      this.post({ type: 'completions', requestId, kind, items: [] });
    }
  }

  /** The slash commands (built-ins and the workspace's and user's own), cached for 5 s. */
  private async commands(fresh = false): Promise<CommandInfo[]> {
    if (!fresh && this.commandList && Date.now() - this.commandList.at < 5000) return this.commandList.list;
    const { commands } = await this.client.request<CommandsResult>(Requests.commands, {});
    this.commandList = { at: Date.now(), list: commands };
    return commands;
  }

  /**
   * What the user typed: a built-in command runs here, an unknown one is refused with a note
   * (the text goes back into the input), everything else is sent (see slash.ts).
   */
  async submit(text: string): Promise<void> {
    const parsed = parseSlash(text);
    let list: CommandInfo[] | null = null;
    // the editor's own built-ins need no list; anything else is checked against the server's
    if (parsed && !text.trim().startsWith('//') && !(EDITOR_BUILTINS as readonly string[]).includes(parsed.name)) {
      list = await this.commands(true).catch((err: unknown) => {
        traceError('listing the commands failed:', err);
        return null;
      });
    }
    const action = classify(text, list);
    if (action.kind === 'unknown') {
      this.post({ type: 'note', level: 'error', text: unknownMessage(action.name, list) });
      this.post({ type: 'setInput', text: text.trim() });
      return;
    }
    if (action.kind === 'builtin') return this.runBuiltin(action.name, action.rest, text);
    if (parsed && action.text === text.trim() && this.inflight) {
      this.post({ type: 'note', level: 'warning', text: `/${parsed.name} waits for the running turn: send it when the turn has ended (or cancel the turn).` });
      this.post({ type: 'setInput', text: text.trim() });
      return;
    }
    return this.send(action.text);
  }

  /**
   * `/undo`: the file changes of the session's newest turn not undone yet according to the
   * server (`undoneBy`, whichever editor or the CLI undid it), by the checkpoint view's *Undo
   * This Turn* (so *Undo Restore* takes it back); again, the turn before.
   */
  private async undoLast(): Promise<void> {
    const sessionId = this.state.sessionId;
    if (!sessionId) {
      this.post({ type: 'note', level: 'warning', text: '/undo: this conversation has no turn to undo yet.' });
      return;
    }
    const { checkpoints } = await this.client.request<{ checkpoints: Checkpoint[] }>(Requests.checkpoints, { sessionId });
    const cp = nextToUndo(checkpoints);
    if (!cp) {
      const undone = checkpoints.some((c) => c.kind === 'turn' && c.undoneBy);
      const why = undone ? 'every turn of this session that changed files is undone already' : 'no turn of this session changed files';
      this.post({ type: 'note', level: 'warning', text: `/undo: ${why}; nothing to undo.` });
      return;
    }
    const res = await api.executeCommand<RestoreResult | undefined>('openprogram.undoTurn', { checkpointId: cp.id });
    if (!res) return; // the command said why
    const n = res.restored.length;
    const left = notRestoredNote(res);
    this.post({ type: 'note', level: left ? 'warning' : 'info', text: `/undo: “${cp.message || 'the last turn'}” undone (${n} file${n === 1 ? '' : 's'}); Undo Restore brings it back, /undo again goes one turn further back.${left}` });
  }

  /** `/fork`, `/undo`, `/model`, `/mode`, `/new`, as context/commands.py describes them. */
  private async runBuiltin(name: EditorBuiltin, rest: string, typed: string): Promise<void> {
    const refuse = (why: string): void => {
      this.post({ type: 'note', level: 'warning', text: why });
      this.post({ type: 'setInput', text: typed.trim() });
    };
    switch (name) {
      case 'new':
        return this.newSession(false);
      case 'model':
        if (!rest) {
          await api.executeCommand('openprogram.pickModel');
          return;
        }
        await api.updateSetting('openprogram.model', rest);
        this.post({ type: 'note', level: 'info', text: `Model for the next turns: ${rest}.` });
        return;
      case 'mode': {
        if (!rest) {
          await api.executeCommand('openprogram.pickMode');
          return;
        }
        const m = modeArgument(rest);
        if ('error' in m) return refuse(m.error);
        await this.setMode(m.mode);
        this.post({ type: 'note', level: 'info', text: `Permission mode: ${m.mode}.` });
        return;
      }
      case 'undo':
        if (this.inflight) return refuse('/undo waits for the running turn: undo when it has ended (or cancel it).');
        return this.undoLast();
      case 'fork': {
        if (this.inflight) return refuse('/fork waits for the running turn: fork when it has ended (or cancel it).');
        const last = [...this.state.items].reverse().find((it) => it.kind === 'message' && it.role === 'user' && it.nodeId !== null);
        if (!last || last.kind !== 'message' || !this.state.sessionId) return refuse('/fork: there is no message to fork from yet.');
        // as its Fork button does: the last message back in the input; sending it (edited or
        // not) replaces it on a new branch, named by the argument
        this.post({ type: 'startFork', nodeId: last.nodeId!, ...(rest ? { name: rest } : {}) });
        return;
      }
    }
  }

  /**
   * Send a message; while a turn runs, it steers that turn instead. `forkFrom` (a node id, or
   * null for a new root) sends it on a new branch, named `forkName` when given.
   */
  async send(text: string, forkFrom?: string | null, forkName?: string): Promise<void> {
    const body = text.trim();
    if (!body) {
      return;
    }
    const sessionId = this.state.sessionId;
    // The panel's own turn has ended (its turn.finished is drawn) but its request's answer is
    // still on the way: a new message waits for it rather than steering a turn that is over.
    if (this.inflight && !this.state.busy && this.inflightDone) {
      await Promise.race([this.inflightDone, new Promise((r) => setTimeout(r, 5000))]);
    }
    // a turn running here steers, whoever sent it (this window before a reload, another one)
    if (this.inflight || (this.attachedTurn && sessionId)) {
      if (sessionId) {
        return this.steer(sessionId, body);
      }
      this.post({ type: 'note', level: 'warning', text: `The turn is still starting, so this was not sent: ${body}` });
      return;
    }
    const cts = new api.CancellationTokenSource();
    this.inflight = cts;
    let settle = (): void => undefined;
    this.inflightDone = new Promise<void>((resolve) => {
      settle = resolve;
    });
    void api.setContext('openprogram.busy', true);
    const clientTurnId = this.newRequestId('turn-');
    const { items: context, shown } = this.attachments.takeShown();
    this.postChips();
    this.post({ type: 'userSent', text: body, predecessor: this.state.headId, forkFrom, clientTurnId,
      ...(shown.length ? { context: shown } : {}) });
    try {
      // The server reports the turn through $/progress, which the language client shows natively.
      const result = await this.startTurn(body, sessionId, forkFrom, clientTurnId, cts.token, context, forkName);
      if (this.inflight === cts) this.post({ type: 'turnResult', result, clientTurnId });
      if (this.inflight === cts && this.state.sessionId === result.sessionId) {
        await this.remember(result.sessionId);
      }
      this.turnsFinished.fire(result.sessionId);
    } catch (err) {
      const raw = err instanceof Error ? err.message : String(err);
      traceError('turn failed:', raw);
      // The connection went with the server: say that, not the transport's words.
      const message = /connection got disposed|connection is (closed|disposed)|client is not running/i.test(raw)
        ? 'The server stopped during this turn. Restart it: the session shows what the turn did until then.'
        : raw;
      if (this.inflight === cts) this.post({ type: 'turnFailed', message });
    } finally {
      // a turn the panel left (`/new` while it ran) went on in the background: it owns nothing here
      const attached = this.inflight === cts;
      if (attached) {
        this.inflight = null;
        this.notified.clear();
        void api.setContext('openprogram.busy', false);
      }
      cts.dispose();
      settle();
      if (!attached) return;
    }
    await this.refreshBranches().catch((err: unknown) => traceError('refreshing branches:', err));
  }

  /** Interject a message into the running turn; the panel shows it where the model will see it. */
  private async steer(sessionId: string, text: string): Promise<void> {
    let accepted = false;
    try {
      ({ accepted } = await this.client.request<{ accepted: boolean }>(Requests.steer, { sessionId, text }));
    } catch (err) {
      traceError('steer failed:', err);
      this.post({ type: 'note', level: 'error', text: `Steering failed: ${err instanceof Error ? err.message : String(err)}` });
      return;
    }
    if (accepted) {
      this.post({ type: 'interjection', mode: 'steer', text });
    } else {
      this.post({ type: 'note', level: 'warning', text: `The turn had already ended, so this was not sent: ${text}` });
    }
  }

  private startTurn(
    text: string,
    sessionId: string | null,
    forkFrom: string | null | undefined,
    clientTurnId: string,
    token: api.CancellationToken,
    context: ContextItem[],
    forkName?: string,
  ): Promise<TurnResult> {
    if (sessionId && (typeof forkFrom === 'string' || (forkFrom === null && forkName))) {
      const asked = this.forkAnswer?.nodeId === forkFrom ? this.forkAnswer.restore : this.forkCode();
      this.forkAnswer = undefined;
      return asked.then(async (restoreCode) => {
        if (!restoreCode || typeof forkFrom !== 'string') return { restoreCode, keep: [] as string[] };
        const own = await this.keepOwnChanges(sessionId, forkFrom, false);
        if (own.note) this.post({ type: 'note', level: 'info', text: own.note });
        return { restoreCode: own.answer === 'switch', keep: own.keep ?? [] };
      }).then(({ restoreCode, keep }) => {
        const params: ForkParams = { sessionId, fromNodeId: forkFrom, text, clientTurnId, restoreCode, ...this.modelParam(),
          ...(forkName ? { name: forkName } : {}), ...(keep.length ? { keepPaths: keep } : {}) };
        if (context.length > 0) (params as unknown as Record<string, unknown>).context = context;
        return this.client.request<TurnResult & { codeRestore?: CheckoutResult }>(Requests.fork, params, token)
          .then((result) => {
            if (result.codeRestore) this.switched(sessionId, result.codeRestore, null);
            return result;
          });
      });
    }
    const params: Record<string, unknown> = { text, clientTurnId, ...this.modelParam() };
    if (context.length > 0) params.context = context;
    if (sessionId) {
      params.sessionId = sessionId;
      if (forkFrom === null) {
        params.branchFrom = null;
      }
    }
    return this.client.request<TurnResult>(Requests.chat, params, token);
  }

  /** A history image's thumbnail: its bytes from the server's store (null when gone). */
  private async loadImage(sha256: string): Promise<void> {
    try {
      const got = await this.client.request<{ mediaType: string; data: string }>(Requests.image, { sha256 });
      this.post({ type: 'imageData', sha256, url: `data:${got.mediaType};base64,${got.data}` });
    } catch (err) {
      traceError('image failed:', err);
      this.post({ type: 'imageData', sha256, url: null });
    }
  }

  /** Queue images (picked, pasted or dropped); one too large is a note, the others go. */
  addImages(images: ImageRef[]): string[] {
    const labels: string[] = [];
    for (const image of images) {
      try {
        labels.push(this.attachments.addImage(image));
      } catch (err) {
        this.post({ type: 'note', level: 'warning', text: `Not attached: ${err instanceof Error ? err.message : String(err)}` });
      }
    }
    this.postChips();
    return labels;
  }

  /** Queue the active editor's selection and its diagnostics for the next message. */
  addSelection(): string[] {
    const sel = api.activeSelection();
    if (!sel) return [];
    const labels = this.attachments.addSelection(sel);
    this.postChips();
    return labels;
  }

  /**
   * Pick a symbol, the declaration of the word under the cursor (in whatever file), its
   * references and the symbol holding the cursor offered first, the active document's others
   * after (its language server gives them and their ranges), and queue the pick (a declaration
   * or the list of references) for the next message; the label queued, nothing when the pick
   * was dismissed, or why none could be.
   */
  async addSymbol(): Promise<{ label?: string; reason?: string }> {
    const doc = await api.activeDocumentSymbols();
    if (!doc) return { reason: 'open a file first: its language server gives the symbols to attach.' };
    const items = symbolPicks(doc, doc.text);
    if (items.length === 0) return { reason: `no language server gives symbols for ${doc.path}.` };
    const picked = await api.showQuickPick(items, { placeHolder: `Attach a symbol to the next message`, matchOnDescription: true });
    if (!picked) return {};
    const label = this.attachments.addSymbol(picked.target, picked.attach);
    this.postChips();
    return { label };
  }

  /** The model picked in the header rides on every turn (it wins over the server's default). */
  private modelParam(): { model?: string } {
    const model = this.state.settings.model.trim();
    return model ? { model } : {};
  }

  /** Cancel the running turn. */
  async cancel(): Promise<void> {
    const sessionId = this.state.sessionId;
    // a turn this panel follows but did not send (re-attached after a reload) is cancelled too
    if (!this.inflight && !this.attachedTurn) {
      return;
    }
    if (sessionId) {
      try {
        await this.client.request(Requests.cancel, { sessionId });
        return;
      } catch (err) {
        traceError('cancel failed; cancelling the request instead:', err);
      }
    }
    this.inflight?.cancel();
  }

  /**
   * Start a fresh conversation. A running turn is cancelled, or with `cancel` false (`/new`)
   * left to finish in the background (its approvals then come as notifications).
   */
  async newSession(cancel = true): Promise<void> {
    if (this.inflight && cancel) {
      await this.cancel();
    } else if (this.inflight) {
      this.inflight = null;
      void api.setContext('openprogram.busy', false);
    }
    this.attachedTurn = null;
    await this.remember(null);
    this.post({ type: 'reset', sessionId: null });
    this.attachments.newConversation();
    this.postChips();
  }

  /** Show a stored session (its active branch, or the given head). */
  async loadSession(sessionId: string, headId?: string): Promise<void> {
    // the server's start reports "running" twice (the client's start, its state change): one
    // load of the same view at a time (each would replay the running turn again)
    const key = `${sessionId}\u0000${headId ?? ''}`;
    if (this.loading?.key === key) return this.loading.done;
    const done = this.loadSessionOnce(sessionId, headId);
    this.loading = { key, done };
    try {
      await done;
    } finally {
      if (this.loading?.done === done) this.loading = null;
    }
  }

  private loading: { key: string; done: Promise<void> } | null = null;

  private async loadSessionOnce(sessionId: string, headId?: string): Promise<void> {
    if (sessionId !== this.state.sessionId) {
      this.attachments.newConversation(); // that conversation has not seen the active file
      this.postChips();
    }
    try {
      const params = { sessionId, limit: this.historyPage, ...(headId ? { headId } : {}) };
      // Shown here, its turns from other editors (a shared `serve --tcp`) reach us too. A turn
      // running there (this window reloaded, another window drives it) is replayed so far:
      // its events wait until the history is drawn without that turn's nodes, then stream on.
      const own = this.inflight !== null;
      const held = own ? null : this.hold(sessionId);
      let h: HistoryResult;
      try {
        const sub = await this.client.request<SubscribeResult>(Requests.subscribe, { sessionId, replay: !own })
          .catch((err: unknown) => {
            traceError('subscribing to', sessionId, 'failed:', err);
            return undefined;
          });
        h = await this.client.request<HistoryResult>(Requests.history, params);
        const shown = held ? withoutRunningTurn(h, held.events, sub?.runningTurnId) : h;
        if (held) this.attachedTurn = sub?.runningTurnId ?? null;
        this.post({ type: 'history', sessionId: h.sessionId, headId: shown.headId, nodes: shown.nodes, hasMore: h.hasMore });
      } finally {
        if (held) this.release(held);
      }
      // an approval still open here is live on its card again (the history redrew the cards)
      for (const [requestId, p] of this.prompts) {
        if (p.sessionId === h.sessionId) this.postPermission(requestId, p);
      }
      await this.remember(h.sessionId);
      await this.fillCheckpoints(h.sessionId);
      await this.refreshBranches();
    } catch (err) {
      traceError('loading session', sessionId, 'failed:', err);
      if (this.state.sessionId === sessionId && this.state.items.length === 0) {
        await this.newSession();
      }
    }
  }

  /** Fetch the page of history before the oldest message shown (the user scrolled up). */
  async loadOlder(): Promise<void> {
    const { sessionId, headId, oldestNodeId, hasMore } = this.state;
    if (!sessionId || !oldestNodeId || !hasMore || this.loadingOlder) {
      return;
    }
    this.loadingOlder = true;
    try {
      const params = { sessionId, beforeNodeId: oldestNodeId, limit: this.historyPage, ...(headId ? { headId } : {}) };
      const h = await this.client.request<HistoryResult>(Requests.history, params);
      this.post({ type: 'olderHistory', sessionId: h.sessionId, headId: h.headId, nodes: h.nodes,
        hasMore: h.hasMore === true });
    } catch (err) {
      traceError('loading older history of', sessionId, 'failed:', err);
    } finally {
      this.loadingOlder = false;
    }
  }

  /** A turn already running in the session on screen (another editor's): show it as running. */
  watchTurn(sessionId: string, turnId: string): void {
    if (this.state.sessionId === sessionId && !this.state.busy) {
      this.post({ type: 'follow', turnId });
    }
  }

  /** Give the checkpoint cards history named their files (one request for the session). */
  private async fillCheckpoints(sessionId: string): Promise<void> {
    if (!this.state.items.some((it) => it.kind === 'checkpoint' && it.files === null)) return;
    try {
      const { checkpoints } = await this.client.request<{ checkpoints: Checkpoint[] }>(Requests.checkpoints, { sessionId });
      if (this.state.sessionId === sessionId) this.post({ type: 'checkpoints', checkpoints });
    } catch (err) {
      traceError('listing the checkpoints of', sessionId, 'failed:', err);
    }
  }

  /** Move the session head to another branch and show it; its code comes along when the user
   * says so (asked once, see switchCode.ts), undoably. */
  async checkout(headId: string, sessionId = this.state.sessionId, withCode = true): Promise<void> {
    if (!sessionId) {
      return;
    }
    const restoreCode = withCode && await decide(this.switching.setting(), this.memento, (c) => this.switching.ask(c));
    let kept: string | undefined;
    let keepPaths: string[] = [];
    if (restoreCode) {
      const own = await this.keepOwnChanges(sessionId, headId, true);
      if (own.answer === 'cancel') return;
      keepPaths = own.keep ?? [];
      kept = own.note;
    }
    const res = await this.client.request<CheckoutResult>(Requests.checkout, { sessionId, headId, restoreCode,
      ...(keepPaths.length ? { keepPaths } : {}) });
    await this.loadSession(sessionId);
    if (restoreCode) {
      this.switched(sessionId, res, res.previousHeadId ?? null);
    }
    if (kept) this.post({ type: 'note', level: 'info', text: kept });
    this.turnsFinished.fire(sessionId);
  }

  /**
   * Before the code of `toHeadId` replaces the workspace's: when files hold changes of the user's
   * own (an unsaved editor, or text other than the shown branch's code state), ask whether to
   * switch them too (undoable) or keep every file (the conversation switches alone).
   */
  /**
   * Before a code switch: the files holding the user's own changes it would replace, and what
   * the user wants done with them (`keep`: the files the switch leaves as they are, each one's
   * own question answered together or file by file).
   */
  private async keepOwnChanges(sessionId: string, toHeadId: string, cancellable: boolean):
    Promise<{ answer: 'switch' | 'cancel'; keep?: string[]; note?: string }> {
    const from = this.state.headId;
    if (!from || from === toHeadId) return { answer: 'switch' };
    let files: BranchDiffResult['files'];
    try {
      ({ files } = await this.client.request<BranchDiffResult>(Requests.branchDiff, { sessionId, fromHeadId: from, toHeadId }));
    } catch {
      return { answer: 'switch' }; // no code state on one side: the switch writes nothing of it
    }
    const texts = new Map<string, Awaited<ReturnType<typeof api.currentText>>>();
    await Promise.all(files.map(async (f) => texts.set(f.path, await api.currentText(f.path))));
    const own = ownChanges(files, (p) => texts.get(p) ?? { text: undefined, unsaved: false });
    if (own.length === 0) return { answer: 'switch' };
    const { message, detail } = ownChangesQuestion(own);
    const answer = await this.switching.askOwn(message, detail, cancellable);
    if (answer === 'cancel' || answer === 'switch') return { answer };
    let keep = own;
    if (answer === 'choose') {
      const replaced = await this.switching.chooseOwn(own);
      if (replaced === undefined && cancellable) return { answer: 'cancel' };
      keep = own.filter((f) => !(replaced ?? []).includes(f));
    }
    return keep.length ? { answer: 'switch', keep: keep.map(ownPath), note: keptNote(keep) } : { answer: 'switch' };
  }

  /** After a code switch: remember its undo and say what changed (with an Undo button). */
  private switched(sessionId: string, res: { restored?: string[]; safetyCheckpointId?: string | null; conflicts?: string[] },
    previous: string | null): void {
    const restored = res.restored ?? [];
    if (res.safetyCheckpointId && restored.length) {
      this.lastSwitch = { sessionId, safety: res.safetyCheckpointId, previous };
      void api.setContext('openprogram.canUndoSwitch', true);
    }
    const msg = describeSwitch(restored, res.conflicts);
    this.post({ type: 'note', level: 'info', text: msg });
    if (this.lastSwitch && restored.length) {
      void api.showInfo(`OpenProgram: ${msg}`, 'Undo').then((choice) => {
        if (choice === 'Undo') void this.undoSwitch();
      });
    }
  }

  /** Undo the last code switch: its files back (restore the safety checkpoint), then the head. */
  async undoSwitch(): Promise<boolean> {
    const last = this.lastSwitch;
    if (!last) {
      return false;
    }
    this.lastSwitch = null;
    void api.setContext('openprogram.canUndoSwitch', false);
    await this.client.request(Requests.restore, { checkpointId: last.safety });
    if (last.previous) {
      await this.client.request(Requests.checkout, { sessionId: last.sessionId, headId: last.previous });
    }
    await this.loadSession(last.sessionId);
    this.turnsFinished.fire(last.sessionId);
    return true;
  }

  /** Whether a fork from an earlier message starts from that message's code (asked once). */
  private async forkCode(): Promise<boolean> {
    return decide(this.switching.setting(), this.memento, (c) => this.switching.ask(c));
  }

  /** Fetch the current session's branches into the branch picker. */
  async refreshBranches(): Promise<BranchInfo[]> {
    const sessionId = this.state.sessionId;
    if (!sessionId) {
      this.post({ type: 'branches', branches: [] });
      return [];
    }
    const { branches } = await this.client.request<{ branches: BranchInfo[] }>(Requests.branches, { sessionId });
    this.post({ type: 'branches', branches });
    return branches;
  }

  /** Send the page the whole state (after it was hidden or reloaded). */
  resync(): void {
    this.sink?.post({ type: 'snapshot', state: this.state });
  }

  /** Ask the page to send its draft. */
  submitDraft(): boolean {
    if (!this.sink?.visible) {
      return false;
    }
    this.sink.post({ type: 'submit' });
    return true;
  }

  /**
   * Answer the oldest open approval with its first option of `kind` (`allow_once`,
   * `reject_once`); false when none is open or it has no such option.
   */
  answerPending(kind: 'allow_once' | 'reject_once'): boolean {
    const open = pendingApprovals(this.state)[0];
    const option = open?.permission?.options.find((o) => o.kind === kind);
    const answer = open?.permission ? this.pending.get(open.permission.requestId) : undefined;
    if (!open?.permission || !option || !answer) return false;
    answer(option.optionId);
    return true;
  }

  /** Open a pending edit approval in the diff editor, to accept or reject it hunk by hunk. */
  async reviewEdit(requestId: string): Promise<void> {
    const prompt = this.prompts.get(requestId);
    if (!prompt || !(await this.reviews.open(requestId, prompt.toolCall))) {
      void api.showInfo('OpenProgram: this approval is no longer waiting, or has no edit to review.');
    }
  }

  /** Answer an open approval from its review: allow once with the accepted hunks, or reject. */
  private answerReview(requestId: string, answer: ReviewAnswer): boolean {
    const prompt = this.prompts.get(requestId);
    const option = prompt?.options.find((o) => o.kind === answer.kind);
    const reply = this.pending.get(requestId);
    if (!option || !reply) return false;
    if (answer.kind === 'allow_once' && answer.acceptedHunks) this.acceptedHunks.set(requestId, answer.acceptedHunks);
    reply(option.optionId);
    return true;
  }

  /** The model, models and permission mode from the settings (the header shows them). */
  setSettings(settings: PanelSettings): void {
    this.post({ type: 'settings', settings });
  }

  /** The workspace's session with a turn running now, if any. */
  private async runningSession(): Promise<string | null> {
    const workspace = api.workspaceFolderPath();
    if (!workspace) return null;
    try {
      const { sessions } = await this.client.request<{ sessions: SessionInfo[] }>(Requests.sessions, { workspace, limit: 20 });
      return sessions.find((s) => s.status === 'running')?.id ?? null;
    } catch {
      return null;
    }
  }

  /** Fetch the sessions for the panel's list. */
  async listSessions(): Promise<void> {
    try {
      const { sessions } = await this.client.request<{ sessions: SessionInfo[] }>(Requests.sessions, {});
      this.post({ type: 'sessions', sessions, workspace: api.workspaceFolderPath() ?? null });
    } catch (err) {
      this.post({ type: 'note', level: 'error', text: `Listing the sessions failed: ${err instanceof Error ? err.message : String(err)}` });
    }
  }

  /** Ask for a new title and set it. */
  async renameSession(sessionId: string): Promise<void> {
    const old = this.state.sessions?.list.find((s) => s.id === sessionId)?.title ?? '';
    const title = (await api.showInputBox({ prompt: 'Session title', value: old, ignoreFocusOut: true }))?.trim();
    if (!title) return;
    await this.guard('Renaming the session', () => this.client.request(Requests.renameSession, { sessionId, title }));
    await this.listSessions();
    this.turnsFinished.fire(sessionId);
  }

  /** Delete a session after the user confirmed it; the panel leaves it if it showed it. */
  async deleteSession(sessionId: string): Promise<void> {
    const title = sessionTitle(this.state.sessions?.list.find((s) => s.id === sessionId) ?? {});
    const ok = await api.confirm(`Delete the session “${title}”? Its messages and branches are removed; the files its turns changed stay as they are.`, 'Delete');
    if (!ok) return;
    const done = await this.guard('Deleting the session', () => this.client.request(Requests.deleteSession, { sessionId }));
    if (done && this.state.sessionId === sessionId) await this.newSession();
    await this.listSessions();
    this.turnsFinished.fire(sessionId);
  }

  /** Run a request; a failure becomes a note in the panel. True when it succeeded. */
  private async guard(what: string, fn: () => Promise<unknown>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (err) {
      this.post({ type: 'note', level: 'error', text: `${what} failed: ${err instanceof Error ? err.message : String(err)}` });
      return false;
    }
  }

  /** Switch the permission mode: the setting changes, and the running server follows it. */
  async setMode(mode: string): Promise<void> {
    if (!(PERMISSION_MODES as readonly string[]).includes(mode)) return;
    await api.updateSetting('openprogram.permissionMode', mode);
  }

  /** Put the cursor in the panel's message box. */
  focusInput(): void {
    this.sink?.post({ type: 'focusInput' });
  }

  dispose(): void {
    this.reviews.dispose();
    this.turnsFinished.dispose();
    this.changes.dispose();
  }

  private post(msg: HostMessage): void {
    this.state = reduce(this.state, msg);
    this.sink?.post(msg);
    this.changes.fire(this.state);
  }

  private async remember(sessionId: string | null): Promise<void> {
    await this.memento.update(SESSION_KEY, sessionId ?? undefined);
  }

  /**
   * Events of a session held back while its history loads (a replay among them), and the
   * prompts that came meanwhile (a re-attached turn's approval asked again) waiting with them.
   */
  private held: Held | null = null;

  private hold(sessionId: string): Held {
    let done = (): void => undefined;
    const released = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.held = { sessionId, events: [], released, done };
    return this.held;
  }

  /** The history is drawn (or failed): what was held streams in, in order, then the prompts. */
  private release(held: Held): void {
    if (this.held === held) this.held = null;
    for (const e of held.events) this.onEvent(e);
    held.done();
  }

  /** A prompt of a session whose history is loading waits until its turn is drawn. */
  private async drawn(sessionId: string | undefined): Promise<void> {
    const held = this.held;
    if (held && sessionId === held.sessionId) await held.released;
  }

  /** The running turn this panel re-attached to (it did not send it): Cancel and steering act on it. */
  private attachedTurn: string | null = null;

  private onEvent(e: EventParams): void {
    if (this.held && e.sessionId === this.held.sessionId) {
      this.held.events.push(e);
      return;
    }
    if (e.type === 'turn.finished' && e.turnId === this.attachedTurn) this.attachedTurn = null;
    const unbound = this.state.sessionId === null;
    if (e.type === PERMISSION_WITHDRAWN) {
      this.withdrawNotification(e);
    }
    // Without a session, only this panel's own turn.started (matched by clientTurnId) gets in.
    if (e.sessionId === this.state.sessionId || (unbound && e.type === 'turn.started' && this.inflight)) {
      this.post({ type: 'event', event: e });
    }
    if (unbound && this.state.sessionId !== null) {
      // A chat that started a new session: bind to it now, not when the turn ends.
      const sessionId = this.state.sessionId;
      void this.remember(sessionId);
      this.turnsFinished.fire(sessionId);
      void this.refreshBranches().catch((err: unknown) => traceError('refreshing branches:', err));
    }
    if ((e.type === 'checkpoint.created' || e.type === 'turn.finished') && e.sessionId !== null) {
      this.turnsFinished.fire(e.sessionId);
    }
  }

  /** A notification cannot be closed: say that the one shown for a withdrawn approval is void. */
  private withdrawNotification(e: EventParams): void {
    const key = cardKey(e.turnId ?? null, String(e.data.toolCallId ?? ''));
    const title = this.notified.get(key);
    if (title === undefined) {
      return;
    }
    this.notified.delete(key);
    const why = withdrawnReason(String(e.data.reason ?? ''));
    void api.showInfo(`OpenProgram: the approval for ${title} was withdrawn (${why}); answering it no longer has an effect.`);
  }

  private newRequestId(prefix: string): string {
    this.nextRequest += 1;
    return `${prefix}${this.nextRequest}`;
  }

  /** Whether a prompt of `sessionId` belongs on the panel (else a notification asks). */
  private onScreen(sessionId: string | undefined): boolean {
    const shown = this.state.sessionId;
    // a new chat's own turn, before the panel is bound to its session
    return sessionId === undefined || sessionId === shown || (shown === null && this.inflight !== null);
  }

  private async askPermission(p: PermissionParams, token: api.CancellationToken): Promise<PermissionOutcome> {
    await this.drawn(p.sessionId);
    const requestId = this.newRequestId('p');
    const shown = this.onScreen(p.sessionId);
    if (shown) this.postPermission(requestId, p);
    const title = p.toolCall.title || p.toolCall.name;
    const toolCallId = cardKey(p.turnId, p.toolCall.toolCallId);
    const native = this.sink?.visible && shown
      ? undefined
      : async (): Promise<string | null> => {
          const names = p.options.map((o) => o.name);
          const box = p.toolCall.sandboxed === undefined ? '' : p.toolCall.sandboxed ? ' (runs sandboxed)' : ` (NOT sandboxed: ${p.toolCall.sandboxNote ?? 'no sandbox'})`;
          const pick = await api.showWarning(approvalMessage(p.toolCall) + box, ...names);
          return p.options.find((o) => o.name === pick)?.optionId ?? null;
        };
    if (native) {
      this.notified.set(toolCallId, title);
    }
    this.prompts.set(requestId, p);
    const choice = await firstAnswer(this.pending, requestId, token, native);
    this.prompts.delete(requestId);
    void this.reviews.settle(requestId);
    const kind = p.options.find((o) => o.optionId === choice)?.kind;
    const hunks = kind?.startsWith('allow') ? this.acceptedHunks.get(requestId) : undefined;
    this.acceptedHunks.delete(requestId);
    if (choice !== null) {
      this.notified.delete(toolCallId);
    }
    const total = p.toolCall.diff?.hunks?.length ?? 0;
    this.post({ type: 'permissionSettled', requestId, choice, ...(hunks ? { acceptedHunks: hunks, hunks: total } : {}) });
    return choice ? { outcome: 'selected', optionId: choice, ...(hunks ? { acceptedHunks: hunks } : {}) } : { outcome: 'cancelled' };
  }

  private postPermission(requestId: string, p: PermissionParams): void {
    this.post({ type: 'permission', requestId, turnId: p.turnId, toolCall: p.toolCall, options: p.options, label: p.label ?? null });
  }

  private async askQuestion(p: QuestionParams, token: api.CancellationToken): Promise<QuestionOutcome> {
    await this.drawn(p.sessionId);
    const requestId = this.newRequestId('q');
    const options = p.options ?? [];
    const shown = this.onScreen(p.sessionId);
    if (shown) this.post({ type: 'question', requestId, questionId: p.questionId, question: p.question, options, allowFreeText: p.allowFreeText });
    const native = this.sink?.visible && shown
      ? undefined
      : async (): Promise<string | null> => {
          const items = p.allowFreeText ? [...options, 'Answer…'] : options;
          const pick = await api.showInfo(`OpenProgram asks: ${p.question}`, ...items);
          if (pick === 'Answer…' || (pick === undefined && items.length === 0)) {
            return (await api.showInputBox({ prompt: p.question, ignoreFocusOut: true })) ?? null;
          }
          return pick ?? null;
        };
    const answer = await firstAnswer(this.pending, requestId, token, native);
    this.post({ type: 'questionSettled', requestId, answer });
    return answer === null ? { cancelled: true } : { answer };
  }
}
