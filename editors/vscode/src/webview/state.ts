/** The chat view's state and the pure reducer that folds host messages into it. */
import { hunksLabel } from '../chat/hunkReview';
import {
  PERMISSION_WITHDRAWN,
  type BranchInfo,
  type CheckpointFile,
  type EventParams,
  type Interjection,
  type Node,
  type PermissionOption,
  type PlanEntry,
  type ToolFinishedData,
  type ToolOutputData,
  type ToolKind,
  type ToolStartedData,
  type ToolStatus,
  type ToolCallRecord,
  type TurnResult,
  type Usage,
  type Checkpoint,
  type SessionInfo,
} from '../protocol';
import type { HostMessage } from './messages';
import { storedView, type Chip, type SentAttachment } from '../context/attachments';

export type { SentAttachment } from '../context/attachments';
import { onSharedEvent } from './shared';

export interface MessageItem {
  kind: 'message';
  key: string;
  /** `report`: a subagent's or another branch's reply delivered into this branch. */
  role: 'user' | 'assistant' | 'summary' | 'system' | 'report';
  text: string;
  /** For a report: whom it is from, as the card's heading. */
  from?: string;
  nodeId: string | null;
  predecessor: string | null;
  streaming: boolean;
  turnId: string | null;
  /** A message sent from another editor on a shared session. */
  elsewhere?: boolean;
  /** The turn's token usage, on its last reply segment once it ended. */
  usage?: Usage;
  /** A user message's attachments (file, selection, diagnostics), as the model got them. */
  context?: SentAttachment[];
}

export interface PermissionPrompt {
  requestId: string;
  options: PermissionOption[];
  /** The chosen option's id, null when cancelled, undefined while open. */
  choice?: string | null;
  /** Why the server withdrew the prompt (`timeout`, `cancelled`, …), when it did. */
  withdrawn?: string;
  /** Commands: whether it will run sandboxed, and why not. */
  sandbox?: { sandboxed: boolean; note?: string };
  /** Another editor's prompt, shown here without buttons that act (see shared.ts). */
  readOnly?: boolean;
  /** Answered by hunk: the accepted hunks (0-based) of how many. */
  acceptedHunks?: { accepted: number[]; total: number };
}

export interface ToolItem {
  kind: 'tool';
  key: string;
  toolCallId: string;
  name: string;
  toolKind: ToolKind;
  title: string;
  status: ToolStatus;
  input: Record<string, unknown>;
  output: string | null;
  /** Why the call was refused before it ran (shown on the card), when it was. */
  blockedReason: string | null;
  diff: { path: string; oldText: string; newText: string } | null;
  /** The MCP server and tool, for tools that come from one. */
  mcp: { server: string; tool: string; description?: string | null } | null;
  permission: PermissionPrompt | null;
  /** The turn the call belongs to; with `toolCallId`, the key the server guarantees unique. */
  turnId: string | null;
  /** The simple commands of a compound command, each needing approval. */
  parts?: string[] | null;
  /** The child agent that asked, when it was one. */
  label?: string | null;
  /** From history: how the call's approval was decided (the prompt itself is gone). */
  decided?: string | null;
  /** A running command's output so far (`tool.output`), until it finishes. */
  live?: string;
  /** The turn's cancel cut the call (while it ran or waited for approval). */
  cancelled?: boolean;
}

/** What a card keeps of live output: the last 64 KiB (the end is what a user watches). */
export const LIVE_KEEP = 64 * 1024;

function keepTail(text: string): string {
  return text.length > LIVE_KEEP ? text.slice(text.length - LIVE_KEEP) : text;
}

/** The key of a tool card: turn id + tool call id (never the call id alone). */
export function cardKey(turnId: string | null, toolCallId: string): string {
  return `${turnId ?? ''}\u0000${toolCallId}`;
}

function isCard(it: ChatItem, turnId: string | null, toolCallId: string): it is ToolItem {
  return it.kind === 'tool' && it.toolCallId === toolCallId && it.turnId === turnId;
}

export interface QuestionItem {
  kind: 'question';
  key: string;
  requestId: string;
  question: string;
  options: string[];
  allowFreeText: boolean;
  /** The answer, null when cancelled, undefined while open. */
  answer?: string | null;
  /** The server's question id, when known. */
  questionId?: string;
  /** Asked in another editor: shown here without a way to answer (see shared.ts). */
  readOnly?: boolean;
}

export interface CheckpointItem {
  kind: 'checkpoint';
  key: string;
  checkpointId: string;
  /** null until known (history names the checkpoint; its files come with `checkpoints`). */
  files: CheckpointFile[] | null;
}

export interface NoteItem {
  kind: 'note';
  key: string;
  level: NoteLevel;
  text: string;
}

export type NoteLevel = 'info' | 'warning' | 'error';

/** A user message fed into a running turn: steering, or a follow-up. */
export interface InterjectionItem {
  kind: 'interjection';
  key: string;
  mode: Interjection['kind'];
  text: string;
}

/** The model's reasoning (`thought.delta`, `metadata.thoughts`): shown collapsed, never reply text. */
export interface ThoughtItem {
  kind: 'thought';
  key: string;
  text: string;
  turnId: string | null;
  streaming: boolean;
}

/** A subagent running on its own branch, its stream shown live in a collapsed section. */
export interface SubagentItem {
  kind: 'subagent';
  key: string;
  agentId: string;
  label: string;
  /** Its turn, once it started (the stream of that turn lands here). */
  turnId: string | null;
  /** The tail of what it wrote so far, and the titles of its last tool calls. */
  text: string;
  tools: string[];
  /** running, or how it ended (done, error, cancelled, …). */
  status: string;
}

export type ChatItem = MessageItem | ToolItem | QuestionItem | CheckpointItem | NoteItem | InterjectionItem | ThoughtItem | SubagentItem;

export interface PanelSettings {
  /** '' is the server's default. */
  model: string;
  models: string[];
  permissionMode: string;
}

/** The context meter: tokens of the last prepare against the model's window. */
export interface ContextMeter {
  usedTokens: number;
  windowTokens: number;
  /** Compactions (summaries) on the branch so far. */
  compactions: number;
}

export interface ChatState {
  sessionId: string | null;
  headId: string | null;
  items: ChatItem[];
  busy: boolean;
  branches: BranchInfo[];
  server: 'starting' | 'running' | 'stopped';
  /** The model and permission mode new turns use, and the models the picker offers. */
  settings: PanelSettings;
  /** The sessions list (null until asked for) and the workspace it was listed from. */
  sessions: { list: SessionInfo[]; workspace: string | null } | null;
  /** How full the model's context window was at the last prepare of the shown branch. */
  context: ContextMeter | null;
  /** The chips above the input: what goes with the next message. */
  attachments: Chip[];
  serverDetail: string | null;
  seq: number;
  /** The `clientTurnId` of the turn this panel sent last; its `turn.started` binds a new session. */
  clientTurnId: string | null;
  /** Older history remains on the server (``openprogram/history`` ``hasMore``). */
  hasMore?: boolean;
  /** The id of the oldest history node loaded: the next page ends before it. */
  oldestNodeId?: string | null;
  /**
   * The turns whose stream this panel shows: its own, and follow-ups that continue the branch
   * it shows. Subagents and other branches of the same session stream too; they are not shown.
   */
  turns: string[];
  /** The id of this panel's running turn, once its `turn.started` arrived. */
  ownTurn: string | null;
  /** The agent's to-do list on the shown branch (`plan.updated`, or its last `todo_write`). */
  plan?: PlanEntry[] | null;
}

/** The state of an empty chat. */
export function initialState(): ChatState {
  return {
    sessionId: null,
    headId: null,
    items: [],
    busy: false,
    branches: [],
    server: 'starting',
    serverDetail: null,
    seq: 0,
    clientTurnId: null,
    turns: [],
    ownTurn: null,
    settings: { model: '', models: [], permissionMode: 'ask' },
    context: null,
    sessions: null,
    attachments: [],
  };
}

/** Fold one host message into the state (never mutates its input). */
export function reduce(state: ChatState, msg: HostMessage): ChatState {
  switch (msg.type) {
    case 'snapshot':
      return msg.state;
    case 'reset':
      return { ...initialState(), server: state.server, settings: state.settings, sessions: state.sessions, sessionId: msg.sessionId, seq: state.seq,
        attachments: state.attachments };
    case 'history':
      return {
        ...fromHistory(state, msg.sessionId, msg.headId, msg.nodes),
        hasMore: msg.hasMore === true && msg.nodes.length > 0,
        oldestNodeId: msg.nodes[0]?.id ?? null,
        // the meter is the shown branch's: its last turn's, none before a first turn
        context: meterOf(msg.nodes),
        plan: planOf(msg.nodes),
      };
    case 'attachments':
      return { ...state, attachments: msg.chips };
    case 'completions':
    case 'startFork':
    case 'imageData':
    case 'setInput':
      return state;
    case 'olderHistory':
      return olderHistory(state, msg.sessionId, msg.headId, msg.nodes, msg.hasMore);
    case 'branches':
      return { ...state, branches: msg.branches };
    case 'checkpoints':
      return withCheckpoints(state, msg.checkpoints);
    case 'settings':
      return { ...state, settings: msg.settings };
    case 'follow':
      // a turn already running in the session on screen (a watched session): stream it here
      return state.turns.includes(msg.turnId) ? state : { ...state, busy: true, turns: [...state.turns, msg.turnId] };
    case 'sessions':
      return { ...state, sessions: { list: msg.sessions, workspace: msg.workspace } };
    case 'userSent':
      return userSent(state, msg.text, msg.predecessor, msg.forkFrom, msg.clientTurnId ?? null, msg.context);
    case 'event':
      return onEvent(state, msg.event);
    case 'turnResult':
      // The result of a turn the panel has since left (New session during the turn) binds nothing.
      if (state.sessionId === null && msg.clientTurnId !== undefined && msg.clientTurnId !== state.clientTurnId) {
        return state;
      }
      return onTurnResult(state, msg.result);
    case 'interjection':
      return push(closeStreams(state), { kind: 'interjection', key: `i${state.seq}`, mode: msg.mode, text: msg.text });
    case 'turnFailed':
      return note({ ...closeStreams(state), busy: false }, 'error', msg.message);
    case 'permission':
      return onPermission(state, msg);
    case 'permissionSettled':
      return mapItems(state, (it) =>
        it.kind === 'tool' && it.permission?.requestId === msg.requestId && it.permission.choice === undefined
          ? { ...it, permission: { ...it.permission, choice: msg.choice,
              ...(msg.acceptedHunks ? { acceptedHunks: { accepted: msg.acceptedHunks, total: msg.hunks ?? msg.acceptedHunks.length } } : {}) } }
          : it,
      );
    case 'question': {
      const live: QuestionItem = {
        kind: 'question',
        key: `q${state.seq}`,
        requestId: msg.requestId,
        question: msg.question,
        options: msg.options,
        allowFreeText: msg.allowFreeText,
        ...(msg.questionId ? { questionId: msg.questionId } : {}),
      };
      // The question.asked event may have drawn it first, read-only: this editor is asked.
      const shown = state.items.findIndex((it) => it.kind === 'question' && it.readOnly && it.questionId === msg.questionId);
      if (msg.questionId && shown >= 0) {
        const items = state.items.slice();
        items[shown] = { ...live, key: items[shown].key };
        return { ...state, items };
      }
      return push(state, live);
    }
    case 'questionSettled':
      return mapItems(state, (it) =>
        it.kind === 'question' && it.requestId === msg.requestId && it.answer === undefined
          ? { ...it, answer: msg.answer }
          : it,
      );
    case 'status':
      return { ...state, server: msg.server, serverDetail: msg.detail ?? null };
    case 'note':
      return note(state, msg.level, msg.text);
    case 'submit':
    case 'focusInput':
      return state;
  }
}

/** Fill the checkpoint cards history named with the files each checkpoint changed. */
function withCheckpoints(state: ChatState, checkpoints: Checkpoint[]): ChatState {
  const byId = new Map(checkpoints.map((c) => [c.id, c]));
  return mapItems(state, (it) => {
    if (it.kind !== 'checkpoint' || it.files !== null) return it;
    const cp = byId.get(it.checkpointId);
    return cp ? { ...it, files: cp.files } : it;
  });
}

function push(state: ChatState, item: ChatItem): ChatState {
  return { ...state, items: [...state.items, item], seq: state.seq + 1 };
}

function note(state: ChatState, level: NoteLevel, text: string): ChatState {
  return push(state, { kind: 'note', key: `n${state.seq}`, level, text });
}

function mapItems(state: ChatState, fn: (it: ChatItem) => ChatItem): ChatState {
  return { ...state, items: state.items.map(fn) };
}

function closeStreams(state: ChatState): ChatState {
  return mapItems(state, (it) => ((it.kind === 'message' || it.kind === 'thought') && it.streaming ? { ...it, streaming: false } : it));
}

function message(
  state: ChatState,
  role: MessageItem['role'],
  text: string,
  extra: Partial<MessageItem> = {},
): MessageItem {
  return {
    kind: 'message',
    key: `m${state.seq}`,
    role,
    text,
    nodeId: null,
    predecessor: null,
    streaming: false,
    turnId: null,
    ...extra,
  };
}

function toolItem(state: ChatState, call: ToolCallRecord, turnId: string | null): ToolItem {
  return {
    kind: 'tool',
    key: `t${state.seq}`,
    toolCallId: call.id,
    name: call.name,
    toolKind: call.kind ?? 'other',
    title: call.title ?? call.name,
    status: call.status ?? 'completed',
    input: call.input ?? {},
    output: call.output ?? null,
    blockedReason: call.blockedReason ?? null,
    diff: null,
    mcp: null,
    permission: null,
    turnId,
    decided: decidedLabel(call),
    ...(call.cancelled === true ? { cancelled: true } : {}),
  };
}

/** Older history drawn above what is shown (its keys continue the sequence, so stay unique). */
function olderHistory(state: ChatState, sessionId: string, headId: string | null, nodes: Node[],
  hasMore: boolean): ChatState {
  if (state.sessionId !== sessionId || state.headId !== headId || nodes.length === 0) {
    return state;
  }
  const older = fromHistory({ ...state, items: [] }, sessionId, headId, nodes);
  return {
    ...state,
    items: [...older.items, ...state.items],
    seq: older.seq,
    hasMore,
    oldestNodeId: nodes[0].id,
  };
}

/** What a stored call's card says about its approval (prompts and rules; the mode is silent). */
export function decidedLabel(call: ToolCallRecord): string | null {
  // {by: user|rule|mode|bypass|hook, option?, rule?: {tool, pattern}} (informational, so checked)
  const a = (call.approval ?? {}) as { by?: unknown; option?: unknown; rule?: { tool?: unknown; pattern?: unknown } | null;
    acceptedHunks?: unknown; hunks?: unknown };
  if (a.by === 'user') {
    const said = a.option === 'allow_always' ? 'Always allowed' : 'Allowed once';
    const some = Array.isArray(a.acceptedHunks) && a.acceptedHunks.every((i) => Number.isInteger(i)) && typeof a.hunks === 'number'
      ? a.acceptedHunks as number[] : undefined;
    return some ? `${said}: ${hunksLabel(some, a.hunks as number)}` : said;
  }
  if (a.by === 'rule') {
    const tool = typeof a.rule?.tool === 'string' ? a.rule.tool : '';
    const pattern = typeof a.rule?.pattern === 'string' ? a.rule.pattern : '';
    return `Allowed by a rule${tool ? ` (${tool}${pattern ? ` ${pattern}` : ''})` : ''}`;
  }
  if (a.by === 'hook') return 'Allowed by a hook';
  const out = call.output ?? '';
  if (out.startsWith('The user rejected')) return 'Rejected';
  if (out.startsWith('The approval was withdrawn')) return 'Approval withdrawn: no answer in time or the turn was cancelled.';
  return null;
}

function fromHistory(
  state: ChatState,
  sessionId: string,
  headId: string | null,
  nodes: Node[],
): ChatState {
  let next: ChatState = { ...state, sessionId, headId, items: [], busy: false };
  for (const node of nodes) {
    if (node.role === 'tool') {
      continue;
    }
    if (node.role === 'user') {
      const shown = userMessage(next, node.text, String(node.metadata?.source ?? 'user'), node.id, node.predecessor ?? null);
      const context = Array.isArray(node.metadata?.context)
        ? node.metadata.context.map(storedView).filter((a): a is SentAttachment => a !== null) : [];
      next = push(next, context.length ? { ...shown, context } : shown);
      continue;
    }
    if (node.role !== 'assistant') {
      next = push(next, message(next, node.role, node.text, { nodeId: node.id, predecessor: node.predecessor }));
      continue;
    }
    const firstItem = next.items.length;
    // Interleave each model call's text with the tool calls it made, as they streamed, and the
    // messages fed into the turn (steering, follow-ups) before the step that first saw them.
    const calls = node.toolCalls ?? [];
    const steps = Array.isArray(node.metadata?.steps) ? node.metadata.steps : null;
    const said = interjections(node);
    const segments: { text: string; calls: ToolCallRecord[]; before: Interjection[] }[] = steps
      ? steps.map((text, i) => ({
          text,
          calls: calls.filter((c) => (c.step ?? 0) === i),
          before: said.filter((x) => x.beforeStep === i),
        }))
      : [{ text: '', calls, before: [] }, { text: node.text, calls: [], before: [] }];
    const placedCalls = new Set(segments.flatMap((seg) => seg.calls));
    const placedSaid = new Set(segments.flatMap((seg) => seg.before));
    // Calls of an unknown step go last; messages fed in after the last step (just before a
    // cancel, or with no steps recorded) follow them.
    segments.push({ text: '', calls: steps ? calls.filter((c) => !placedCalls.has(c)) : [], before: [] });
    const late = said.filter((x) => !placedSaid.has(x));
    const last = segments.map((seg) => seg.text).reduce((at, text, i) => (text ? i : at), -1);
    segments.forEach((seg, i) => {
      for (const x of seg.before) {
        next = push(next, { kind: 'interjection', key: `i${next.seq}`, mode: x.kind, text: x.text });
      }
      const thought = steps && i < steps.length ? storedThought(node, i) : '';
      if (thought) {
        next = push(next, { kind: 'thought', key: `th${next.seq}`, text: thought, turnId: node.id, streaming: false });
      }
      if (seg.text) {
        const isLast = i === last;
        next = push(next, message(next, 'assistant', seg.text, isLast ? { nodeId: node.id, predecessor: node.predecessor } : {}));
      }
      for (const call of seg.calls) {
        next = push(next, toolItem(next, call, node.id)); // an assistant node's id is its turn id
      }
    });
    if (last < 0 && node.text) {
      next = push(next, message(next, 'assistant', node.text, { nodeId: node.id, predecessor: node.predecessor }));
    }
    for (const x of late) {
      next = push(next, { kind: 'interjection', key: `i${next.seq}`, mode: x.kind, text: x.text });
    }
    next = afterTurn(next, node, firstItem);
  }
  return next;
}

/** Markers the server appends to a stopped turn's text; the panel says it with a note instead. */
const END_MARKER = /\n*\[(?:interrupted|cancelled|error: [^\]]*)\]\s*$/;
const INTERRUPTED = /\[interrupted\]\s*$/;
const INTERRUPTED_CALL = 'Interrupted: the server stopped while this ran.';
const INTERRUPTED_TURN = 'This turn was interrupted: the server or the editor stopped before it finished. What it did until then is shown above.';

/** What a stored turn ended with: its unfinished calls closed, usage, checkpoint and notes. */
function afterTurn(state: ChatState, node: Node, from: number): ChatState {
  const status = node.status ?? 'done';
  const ended = status === 'interrupted' || status === 'cancelled' || status === 'error';
  const meta = node.metadata ?? {};
  const usage = usageOf(meta.usage);
  const lastMsg = lastIndex(state.items, (it, i) => i >= from && it.kind === 'message' && it.role === 'assistant');
  let next = mapItems(state, (it) => {
    if (state.items.indexOf(it) < from) return it;
    if (it.kind === 'message' && it.role === 'assistant') {
      const text = it.text.replace(END_MARKER, '');
      const withUsage = usage && state.items.indexOf(it) === lastMsg ? { usage } : {};
      return text !== it.text || withUsage.usage ? { ...it, text, ...withUsage } : it;
    }
    if (ended && it.kind === 'tool' && (it.status === 'in_progress' || it.status === 'pending')) {
      const why = status === 'interrupted' ? INTERRUPTED_CALL : status === 'cancelled' ? 'Cancelled.' : 'The turn failed.';
      return { ...it, status: 'failed', output: it.output ?? why, ...(status === 'cancelled' ? { cancelled: true } : {}) };
    }
    return it;
  });
  next = { ...next, items: next.items.filter((it, i) => !(i >= from && it.kind === 'message' && it.role === 'assistant' && !it.text && it.nodeId === null)) };
  const checkpointId = typeof meta.checkpointId === 'string' ? meta.checkpointId : null;
  if (checkpointId) {
    next = push(next, { kind: 'checkpoint', key: `c-${checkpointId}`, checkpointId, files: null });
  }
  if (status === 'interrupted') {
    next = push(next, {
      kind: 'note', key: `int-${node.id}`, level: 'warning',
      text: INTERRUPTED_TURN,
    });
  } else if (status === 'cancelled') {
    next = push(next, { kind: 'note', key: `cancel-${node.id}`, level: 'info', text: 'Cancelled.' });
  } else if (status === 'error') {
    const err = meta.error as { message?: unknown } | undefined;
    next = push(next, { kind: 'note', key: `err-${node.id}`, level: 'error', text: typeof err?.message === 'string' ? err.message : 'The turn failed.' });
  }
  (Array.isArray(meta.warnings) ? meta.warnings : []).forEach((text: unknown, i: number) => {
    next = push(next, { kind: 'note', key: `warn-${node.id}-${i}`, level: 'warning', text: String(text) });
  });
  return next;
}

/**
 * The to-do list of a branch from its history: the input of its last completed `todo_write`
 * call (each call replaces the whole list); null when it has none.
 */
export function planOf(nodes: Node[]): PlanEntry[] | null {
  for (let i = nodes.length - 1; i >= 0; i--) {
    const calls = nodes[i].role === 'assistant' ? nodes[i].toolCalls ?? [] : [];
    for (let j = calls.length - 1; j >= 0; j--) {
      if (calls[j].name === 'todo_write' && calls[j].status === 'completed') {
        return planEntries(calls[j].input?.todos);
      }
    }
  }
  return null;
}

/** Plan entries from untrusted JSON (a `plan.updated` payload or a stored call's input). */
export function planEntries(raw: unknown): PlanEntry[] {
  const out: PlanEntry[] = [];
  for (const e of Array.isArray(raw) ? raw : []) {
    const x = e as { content?: unknown; status?: unknown; activeForm?: unknown } | null;
    if (!x || typeof x.content !== 'string') continue;
    const status = x.status === 'completed' || x.status === 'in_progress' ? x.status : 'pending';
    out.push({ content: x.content, status, ...(typeof x.activeForm === 'string' && x.activeForm ? { activeForm: x.activeForm } : {}) });
  }
  return out;
}

/**
 * The meter of a branch from its history: the newest turn's ContextCommit digest
 * (`metadata.context`: the estimate its model call started with, and the window), and the
 * summaries on the branch. null when no turn recorded one.
 */
export function meterOf(nodes: Node[]): ContextMeter | null {
  const compactions = nodes.filter((n) => n.role === 'summary').length;
  for (let i = nodes.length - 1; i >= 0; i--) {
    const d = nodes[i].role === 'assistant' ? nodes[i].metadata?.context as { estimate?: unknown; contextWindow?: unknown } | undefined : undefined;
    if (d && typeof d.estimate === 'number' && typeof d.contextWindow === 'number' && d.contextWindow > 0) {
      return { usedTokens: d.estimate, windowTokens: d.contextWindow, compactions };
    }
  }
  return null;
}

/** A turn's token usage, when the value is one. */
export function usageOf(raw: unknown): Usage | undefined {
  const u = raw as Partial<Usage> | null | undefined;
  return u && typeof u.inputTokens === 'number' && typeof u.outputTokens === 'number'
    ? { inputTokens: u.inputTokens, outputTokens: u.outputTokens, ...(u.estimated === true ? { estimated: true } : {}) }
    : undefined;
}

/** The well-formed entries of an assistant node's `metadata.interjections`, in order. */
function interjections(node: Node): Interjection[] {
  const raw: unknown = node.metadata?.interjections;
  if (!Array.isArray(raw)) {
    return [];
  }
  return raw.flatMap((x: unknown): Interjection[] => {
    const r = x as Partial<Interjection> | null;
    if (!r || typeof r.text !== 'string') {
      return [];
    }
    const beforeStep = typeof r.beforeStep === 'number' && r.beforeStep >= 0 ? r.beforeStep : Number.MAX_SAFE_INTEGER;
    return [{ beforeStep, kind: r.kind === 'follow_up' ? 'follow_up' : 'steer', text: r.text }];
  });
}

function userSent(
  state: ChatState,
  text: string,
  predecessor: string | null,
  forkFrom: string | null | undefined,
  clientTurnId: string | null,
  context?: SentAttachment[],
): ChatState {
  let items = state.items;
  if (forkFrom !== undefined) {
    // A fork shows the chain up to the fork point; everything after it belongs to another branch.
    const at = forkFrom === null ? -1 : items.findIndex((it) => it.kind === 'message' && it.nodeId === forkFrom);
    items = at < 0 && forkFrom !== null ? items : items.slice(0, at + 1);
  }
  const next: ChatState = { ...state, items, busy: true, clientTurnId, ownTurn: null };
  return push(next, message(next, 'user', text, { predecessor: forkFrom ?? predecessor, ...(context?.length ? { context } : {}) }));
}

/** Events that belong to one turn's stream (and so to one branch). */
const TURN_SCOPED = new Set(['text.delta', 'thought.delta', 'tool.started', 'tool.finished', 'tool.output', 'turn.finished', 'context.usage', 'permission.requested', 'plan.updated']);

function onEvent(state: ChatState, ev: EventParams): ChatState {
  if (state.sessionId === null) {
    // A chat that starts a new session binds the panel when its own turn starts; until then
    // other sessions' events (other windows, subagents) are not ours.
    if (!startsOurTurn(state, ev)) {
      return state;
    }
  } else if (ev.sessionId !== state.sessionId) {
    return state;
  }
  let adopted: ChatState = state.sessionId === null ? { ...state, sessionId: ev.sessionId } : state;
  const turnId = ev.turnId ?? null;
  const live = subagentStream(adopted, ev, turnId);
  if (live) return live;
  if (ev.type === 'turn.started' && turnId) {
    if (state.busy && state.ownTurn === null && startsOurTurn(state, ev)) {
      return { ...adopted, busy: true, ownTurn: turnId, turns: [...adopted.turns, turnId] };
    }
    if (!state.busy && continuesShownBranch(state, ev)) {
      return followUp(adopted, ev, turnId);
    }
    return adopted;
  }
  if (TURN_SCOPED.has(ev.type) && turnId && !adopted.turns.includes(turnId)) {
    // A server that sends no turn.started: the first stream of our running turn is ours.
    if (!(adopted.busy && adopted.ownTurn === null && ev.type !== 'turn.finished')) {
      return adopted;
    }
    adopted = { ...adopted, ownTurn: turnId, turns: [...adopted.turns, turnId] };
  }
  switch (ev.type) {
    case 'text.delta':
      return appendDelta(adopted, turnId, String(ev.data.text ?? ''));
    case 'thought.delta':
      return appendThought(adopted, turnId, String(ev.data.text ?? ''));
    case 'tool.started':
      return upsertTool(adopted, ev.data as unknown as ToolStartedData, turnId);
    case 'tool.finished': {
      const d = ev.data as unknown as ToolFinishedData;
      return mapItems(adopted, (it) =>
        isCard(it, turnId, d.toolCallId)
          ? { ...it, status: d.status, output: d.output ?? null, blockedReason: d.blockedReason ?? null, live: undefined,
            ...(d.cancelled === true ? { cancelled: true } : {}) }
          : it,
      );
    }
    case 'tool.output': {
      // A running command's output as it comes; tool.finished replaces it with the whole output.
      const d = ev.data as unknown as ToolOutputData;
      const text = String(d.text ?? '');
      return text
        ? mapItems(adopted, (it) => (isCard(it, turnId, String(d.toolCallId)) && it.status !== 'completed' && it.status !== 'failed'
          ? { ...it, live: keepTail((it.live ?? '') + text) }
          : it))
        : adopted;
    }
    case 'turn.finished':
      return onTurnResult(adopted, ev.data as unknown as TurnResult);
    case 'checkpoint.created':
      // a turn that ended during the workspace's first walk: its card (named by the result or
      // by history, files unknown) gets its files now
      return withCheckpoints(adopted, [ev.data as unknown as Checkpoint]);
    case 'plan.updated':
      return { ...adopted, plan: planEntries(ev.data.entries) };
    case 'context.usage': {
      const used = Number(ev.data.usedTokens);
      const window = Number(ev.data.windowTokens);
      const compactions = Number(ev.data.compactions);
      return Number.isFinite(used) && Number.isFinite(window) && window > 0
        ? { ...adopted, context: { usedTokens: used, windowTokens: window, compactions: Number.isFinite(compactions) ? compactions : 0 } }
        : adopted;
    }
    case 'context.compacted':
      return note(adopted, 'info', 'Context compacted to fit the model window.');
    case 'subagent.started': {
      const label = String(ev.data.label ?? ev.data.agentId ?? 'subagent');
      const agentId = String(ev.data.agentId ?? '');
      if (!agentId || adopted.items.some((it) => it.kind === 'subagent' && it.agentId === agentId)) return adopted;
      return push(adopted, { kind: 'subagent', key: `agent-${agentId}`, agentId, label, turnId: null, text: '', tools: [], status: 'running' });
    }
    case 'subagent.ended': {
      const agentId = String(ev.data.agentId ?? '');
      const status = String(ev.data.status ?? 'ended');
      if (adopted.items.some((it) => it.kind === 'subagent' && it.agentId === agentId)) {
        return mapItems(adopted, (it) => (it.kind === 'subagent' && it.agentId === agentId ? { ...it, status } : it));
      }
      const label = String(ev.data.label ?? ev.data.agentId ?? 'subagent');
      return note(adopted, 'info', `Subagent “${label}” ${status}.`);
    }
    case 'branch.message_sent': {
      // `to`/`from` are SESSION:NODE ids: the branch's label when the server gives one, else words
      const label = typeof ev.data.toLabel === 'string' && ev.data.toLabel ? ev.data.toLabel : '';
      if (ev.data.kind === 'reply') return note(adopted, 'info', 'A reply came back from another branch.');
      return note(adopted, 'info', label ? `Message sent to ${label}.` : 'Message sent to another branch.');
    }
    case PERMISSION_WITHDRAWN: {
      // The prompt is gone: whether it was still open or settled as "no answer" when the
      // request was cancelled, the card says why; a chosen option stays as it was.
      const toolCallId = String(ev.data.toolCallId ?? '');
      const reason = String(ev.data.reason ?? '') || 'withdrawn';
      return mapItems(adopted, (it) =>
        isCard(it, turnId, toolCallId) && it.permission && !it.permission.choice && !it.permission.withdrawn
          ? { ...it, permission: { ...it.permission, choice: null, withdrawn: reason } }
          : it,
      );
    }
    default:
      return onSharedEvent(adopted, ev) ?? adopted;
  }
}

/** The most a subagent section keeps of the text its subagent streamed (its tail). */
const SUBAGENT_TEXT = 4000;

/**
 * A subagent's stream, into its section (not the conversation): its `turn.started` (carrying its
 * `agentId`) binds the section to the turn, whose text and tool calls then land there. Undefined
 * when the event is no subagent's.
 */
function subagentStream(state: ChatState, ev: EventParams, turnId: string | null): ChatState | undefined {
  if (!turnId) return undefined;
  if (ev.type === 'turn.started') {
    const agentId = typeof ev.data.agentId === 'string' ? ev.data.agentId : '';
    if (!agentId || !state.items.some((it) => it.kind === 'subagent' && it.agentId === agentId)) return undefined;
    return mapItems(state, (it) => (it.kind === 'subagent' && it.agentId === agentId ? { ...it, turnId, status: 'running' } : it));
  }
  const section = state.items.find((it): it is SubagentItem => it.kind === 'subagent' && it.turnId === turnId);
  if (!section) return undefined;
  const update = (f: (it: SubagentItem) => SubagentItem): ChatState =>
    mapItems(state, (it) => (it.kind === 'subagent' && it.turnId === turnId ? f(it) : it));
  switch (ev.type) {
    case 'text.delta':
      return update((it) => ({ ...it, text: (it.text + String(ev.data.text ?? '')).slice(-SUBAGENT_TEXT) }));
    case 'tool.started': {
      const title = String(ev.data.title ?? ev.data.name ?? 'tool');
      return update((it) => ({ ...it, tools: [...it.tools, title].slice(-5) }));
    }
    case 'turn.finished':
      return update((it) => ({ ...it, status: String(ev.data.status ?? 'done') }));
    default:
      return TURN_SCOPED.has(ev.type) ? state : undefined;
  }
}

/**
 * Whether `ev` is the `turn.started` of the turn this panel sent. A turn started elsewhere (a
 * follow-up of an older session's subagent, another client) does not echo our id; a server
 * that echoes nothing binds the panel at the turn's result instead.
 */
function startsOurTurn(state: ChatState, ev: EventParams): boolean {
  if (ev.type !== 'turn.started' || !ev.sessionId || !state.busy) {
    return false;
  }
  return state.clientTurnId ? ev.data.clientTurnId === state.clientTurnId : ev.data.clientTurnId === undefined;
}

/**
 * Whether a turn that someone else started (a subagent's report coming back, a message sent to
 * this branch, another editor) continues the branch the panel shows. Subagents run on their
 * own branches and are never shown here.
 */
function continuesShownBranch(state: ChatState, ev: EventParams): boolean {
  if (ev.data.source === 'agent_spawn') return false;
  // a running turn replayed to a panel that re-attached (a reload): the session's first turn
  // starts from no node, and the history drawn without it is empty
  if (ev.replayed === true && state.headId === null && state.items.length === 0) return (ev.data.predecessor ?? null) === null;
  return state.headId !== null && ev.data.predecessor === state.headId;
}

/** Show a turn that continues this branch: its message, then its stream. */
function followUp(state: ChatState, ev: EventParams, turnId: string): ChatState {
  const text = String(ev.data.text ?? '');
  const source = String(ev.data.source ?? 'user');
  const userNodeId = typeof ev.data.userNodeId === 'string' ? ev.data.userNodeId : null;
  const next: ChatState = { ...state, busy: true, turns: [...state.turns, turnId] };
  const item = userMessage(next, text, source, userNodeId, state.headId);
  // Our own turns are matched by clientTurnId: a person's message here came from another editor,
  // unless it is replayed (this window reloaded mid-turn may have sent it: no claim either way).
  return push(next, item.role === 'user' && ev.replayed !== true ? { ...item, elsewhere: true, turnId } : { ...item, turnId });
}

/** A user node as shown: a person's message, or a report that came back from a subagent or branch. */
function userMessage(state: ChatState, text: string, source: string, nodeId: string | null, predecessor: string | null): MessageItem {
  if (source === 'user' || source === 'cli') {
    return message(state, 'user', text, { nodeId, predecessor });
  }
  if (source === 'agent_spawn') {
    return message(state, 'report', text, { nodeId, predecessor, from: 'Task from the parent agent' });
  }
  const report = reportOf(text);
  return message(state, 'report', report.body, { nodeId, predecessor, from: `Report from ${report.from}` });
}

/**
 * Split a delivered report (`[Agent tests finished (done); its branch tip is s:n]\n\nbody`) into
 * who it is from and its body; the bracketed header lines are for the model.
 */
export function reportOf(text: string): { from: string; body: string } {
  const lines = text.split('\n');
  let from = '';
  let i = 0;
  for (; i < lines.length && /^\[.*\]$/.test(lines[i].trim()); i++) {
    const line = lines[i].trim();
    const m = /^\[Agent (.+?) finished \(([\w-]+)\)/.exec(line) ?? /^\[Reply from (.+?) \(/.exec(line) ?? /^\[Message \S+ to (.+?) was not answered/.exec(line);
    if (m && !from) from = m[2] ? `${m[1]} (${m[2]})` : m[1];
  }
  const body = lines.slice(i).join('\n').trim();
  return { from: from || 'a subagent', body: body || (i > 0 ? lines.slice(0, i).join(' ').replace(/^\[|\]$/g, '') : text) };
}

function appendDelta(state: ChatState, turnId: string | null, text: string): ChatState {
  if (!text) {
    return state;
  }
  const last = state.items[state.items.length - 1];
  if (last && last.kind === 'message' && last.role === 'assistant' && last.streaming && last.turnId === turnId) {
    const items = state.items.slice(0, -1);
    return { ...state, busy: true, items: [...items, { ...last, text: last.text + text }] };
  }
  // Text after a tool card starts a new segment of the same reply.
  return push({ ...state, busy: true }, message(state, 'assistant', text, { streaming: true, turnId }));
}

function appendThought(state: ChatState, turnId: string | null, text: string): ChatState {
  if (!text) {
    return state;
  }
  const last = state.items[state.items.length - 1];
  if (last && last.kind === 'thought' && last.streaming && last.turnId === turnId) {
    return { ...state, busy: true, items: [...state.items.slice(0, -1), { ...last, text: last.text + text }] };
  }
  // Reasoning after text or a tool call is the next model call's: its own block.
  return push(closeStreams({ ...state, busy: true }), { kind: 'thought', key: `th${state.seq}`, text, turnId, streaming: true });
}

/** A history node's stored reasoning for one step (`metadata.thoughts`), joined. */
function storedThought(node: Node, step: number): string {
  const all = Array.isArray(node.metadata?.thoughts) ? node.metadata.thoughts as { step?: unknown; text?: unknown }[] : [];
  // a block sent with display "omitted" has no text: nothing to show
  return all.filter((t) => (Number(t.step) || 0) === step && typeof t.text === 'string' && t.text !== '').map((t) => t.text).join('\n\n');
}

function upsertTool(state: ChatState, d: ToolStartedData, turnId: string | null): ChatState {
  const found = state.items.some((it) => isCard(it, turnId, d.toolCallId));
  if (found) {
    return mapItems(state, (it) =>
      isCard(it, turnId, d.toolCallId)
        ? { ...it, status: it.status === 'pending' ? 'in_progress' : it.status, title: d.title || it.title }
        : it,
    );
  }
  return push(closeStreams(state), {
    kind: 'tool',
    key: `t${state.seq}`,
    toolCallId: d.toolCallId,
    name: d.name,
    toolKind: d.kind ?? 'other',
    title: d.title || d.name,
    status: 'in_progress',
    input: d.input ?? {},
    output: null,
    blockedReason: null,
    diff: null,
    mcp: d.mcp ?? null,
    permission: null,
    turnId,
  });
}

function onPermission(state: ChatState, msg: Extract<HostMessage, { type: 'permission' }>): ChatState {
  const tc = msg.toolCall;
  const turnId = msg.turnId ?? null;
  const permission: PermissionPrompt = { requestId: msg.requestId, options: msg.options };
  if (typeof tc.sandboxed === 'boolean') {
    permission.sandbox = { sandboxed: tc.sandboxed, note: tc.sandboxNote };
  }
  const diff = tc.diff ?? null;
  const extra = { parts: tc.parts ?? null, label: msg.label ?? null, title: tc.title || tc.name };
  // Only the card of this very call (same turn, same id) takes the prompt, never an older one.
  if (state.items.some((it) => isCard(it, turnId, tc.toolCallId))) {
    return mapItems(state, (it) =>
      isCard(it, turnId, tc.toolCallId)
        ? { ...it, ...extra, permission, diff: diff ?? it.diff, input: tc.input ?? it.input, mcp: tc.mcp ?? it.mcp }
        : it,
    );
  }
  return push(closeStreams(state), {
    kind: 'tool',
    key: `t${state.seq}`,
    toolCallId: tc.toolCallId,
    name: tc.name,
    toolKind: tc.kind ?? 'other',
    status: 'pending',
    input: tc.input ?? {},
    output: null,
    blockedReason: null,
    diff,
    mcp: tc.mcp ?? null,
    permission,
    turnId,
    ...extra,
  });
}

function onTurnResult(state: ChatState, r: TurnResult): ChatState {
  if (state.sessionId !== null && r.sessionId !== state.sessionId) {
    return state;
  }
  const ended = r.status !== 'done';
  // A turn the server's shutdown cut (Restart Server, the editor closing) was not cancelled by
  // anyone: the server records it `interrupted` and its text ends with that marker.
  const interrupted = r.status === 'cancelled' && INTERRUPTED.test(r.text ?? '');
  let items = state.items.map((it): ChatItem => {
    if ((it.kind === 'message' || it.kind === 'thought') && it.streaming) return { ...it, streaming: false };
    // A cancelled or failed turn leaves no tool running.
    if (ended && it.kind === 'tool' && (it.status === 'in_progress' || it.status === 'pending')) {
      if (interrupted) return { ...it, status: 'failed', output: it.output ?? INTERRUPTED_CALL };
      return { ...it, status: 'failed', output: it.output ?? (r.status === 'cancelled' ? 'Cancelled.' : 'The turn failed.'),
        ...(r.status === 'cancelled' ? { cancelled: true } : {}) };
    }
    return it;
  });
  // The newest user message without a node id is the one this turn answered.
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i];
    if (it.kind === 'message' && (it.role === 'user' || it.role === 'report')) {
      if (it.nodeId === null) {
        items[i] = { ...it, nodeId: r.userNodeId };
      }
      break;
    }
  }
  let next: ChatState = {
    ...state, items, sessionId: r.sessionId, headId: r.headId, busy: false, clientTurnId: null, ownTurn: null,
    turns: state.turns.slice(-20),
  };
  const hasAssistant = items.some((it) => it.kind === 'message' && it.nodeId === r.assistantNodeId);
  if (!hasAssistant) {
    const lastUser = lastIndex(items, (it) => it.kind === 'message' && (it.role === 'user' || it.role === 'report'));
    const seg = lastIndex(items, (it, i) => i > lastUser && it.kind === 'message' && it.role === 'assistant');
    if (seg >= 0) {
      items = [...items];
      items[seg] = { ...(items[seg] as MessageItem), nodeId: r.assistantNodeId };
      next = { ...next, items };
    } else if ((r.text ?? '').replace(END_MARKER, '')) {
      next = push(next, message(next, 'assistant', r.text.replace(END_MARKER, ''), { nodeId: r.assistantNodeId }));
    }
  }
  const usage = usageOf(r.usage);
  if (usage) {
    const at = lastIndex(next.items, (it) => it.kind === 'message' && it.nodeId === r.assistantNodeId);
    if (at >= 0) {
      const items = [...next.items];
      items[at] = { ...(items[at] as MessageItem), usage };
      next = { ...next, items };
    }
  }
  const cp = r.checkpoint;
  if (cp && cp.files.length > 0 && !next.items.some((it) => it.kind === 'checkpoint' && it.checkpointId === cp.id)) {
    next = push(next, { kind: 'checkpoint', key: `c${next.seq}`, checkpointId: cp.id, files: cp.files });
  }
  const pending = cp ? undefined : r.checkpointPending;
  if (typeof pending === 'string' && pending && !next.items.some((it) => it.kind === 'checkpoint' && it.checkpointId === pending)) {
    // committed after the workspace's first walk: shown when checkpoint.created brings its files
    next = push(next, { kind: 'checkpoint', key: `c-${pending}`, checkpointId: pending, files: null });
  }
  if (r.status === 'error' && !next.items.some((it) => it.kind === 'note' && it.key === `err-${r.assistantNodeId}`)) {
    next = push(next, { kind: 'note', key: `err-${r.assistantNodeId}`, level: 'error', text: r.error?.message ?? 'The turn failed.' });
  } else if (interrupted && !next.items.some((it) => it.kind === 'note' && it.key === `int-${r.assistantNodeId}`)) {
    next = push(next, { kind: 'note', key: `int-${r.assistantNodeId}`, level: 'warning', text: INTERRUPTED_TURN });
  } else if (r.status === 'cancelled' && !interrupted && !next.items.some((it) => it.kind === 'note' && it.key === `cancel-${r.assistantNodeId}`)) {
    next = push(next, { kind: 'note', key: `cancel-${r.assistantNodeId}`, level: 'info', text: 'Cancelled.' });
  }
  // Non-fatal problems of the turn (e.g. no checkpoint); turn.finished and the result both carry them.
  (Array.isArray(r.warnings) ? r.warnings : []).forEach((text, i) => {
    const key = `warn-${r.assistantNodeId}-${i}`;
    if (!next.items.some((it) => it.kind === 'note' && it.key === key)) {
      next = push(next, { kind: 'note', key, level: 'warning', text: String(text) });
    }
  });
  return next;
}

function lastIndex(items: ChatItem[], pred: (it: ChatItem, i: number) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) {
    if (pred(items[i], i)) {
      return i;
    }
  }
  return -1;
}

/** A withdrawal reason (`permission.withdrawn`) in words. */
export function withdrawnReason(reason: string): string {
  if (reason === 'timeout') return 'no answer in time';
  if (reason === 'cancelled') return 'the turn was cancelled';
  return reason || 'withdrawn by the server';
}

/** The tool cards whose approval is still open, oldest first. */
export function pendingApprovals(state: ChatState): ToolItem[] {
  return state.items.filter(
    (it): it is ToolItem => it.kind === 'tool' && it.permission !== null && it.permission.choice === undefined && !it.permission.withdrawn,
  );
}

/** How many cards wait for the user: open approvals and unanswered questions. */
export function waitingCount(state: ChatState): number {
  return pendingApprovals(state).length + state.items.filter((it) => it.kind === 'question' && it.answer === undefined).length;
}

/** Normalise a folder path for comparison (no trailing slash). */
function folderKey(path: string | null | undefined): string {
  return (path ?? '').replace(/\/+$/, '');
}

/**
 * The sessions list as shown: this workspace's first, then the others (each group newest
 * first), filtered by `query` (every word must occur in the title, id or folder).
 */
export function orderSessions(list: SessionInfo[], workspace: string | null, query = ''): { here: SessionInfo[]; elsewhere: SessionInfo[] } {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const match = (s: SessionInfo): boolean => {
    const hay = `${s.title} ${s.id} ${s.workspace ?? ''}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  };
  const newest = (a: SessionInfo, b: SessionInfo): number => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0);
  const ws = folderKey(workspace);
  const shown = list.filter(match).sort(newest);
  return {
    here: shown.filter((s) => ws !== '' && folderKey(s.workspace) === ws),
    elsewhere: shown.filter((s) => ws === '' || folderKey(s.workspace) !== ws),
  };
}
