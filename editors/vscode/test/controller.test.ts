// The chat controller against a real openprogram-lsp over stdio: approvals on the card and by
// notification, questions, checkpoints, forks and branch switches, as the panel drives them.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ChatController, type ChatSink } from '../src/chat/controller';
import { Requests, type BranchInfo, type RestoreResult } from '../src/protocol';
import type { HostMessage } from '../src/webview/messages';
import type { ToolItem } from '../src/webview/state';
import { startAgent, type RunningAgent } from './support/agent';
import { Memento, ui, workspace } from './support/vscode';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
// OPENPROGRAM_LSP: another command for the same server (the suite's fork client, tests/forkclient.py)
const server = process.env.OPENPROGRAM_LSP ?? join(repo, '.venv', 'bin', 'openprogram-lsp');
// without the server these tests are skipped, except in CI, where a missing server is a failure
const noServer = !existsSync(server) && !process.env.CI && 'no .venv/bin/openprogram-lsp';
const ORIGINAL = 'print("hello")\n';
const UPDATED = 'def greet():\n    print("hello")\n';

/** Plays the chat page: records messages and answers prompts the way a user would click. */
class Page implements ChatSink {
  visible = true;
  messages: HostMessage[] = [];
  controller!: ChatController;
  permissionKind = 'allow_once';
  answer = 'blue';
  cancelOnTool: string | null = null;
  /** Leave approvals unanswered and cancel the turn instead. */
  cancelOnPermission = false;
  /** The panel's session when the first approval arrived (mid-turn). */
  sessionAtPermission: string | null | undefined;
  post(msg: HostMessage): void {
    this.messages.push(msg);
    if (msg.type === 'event' && msg.event.type === 'tool.started' && msg.event.data.name === this.cancelOnTool) {
      setImmediate(() => void this.controller.cancel());
    }
    if (msg.type === 'permission' && this.sessionAtPermission === undefined) {
      this.sessionAtPermission = this.controller.state.sessionId;
    }
    if (msg.type === 'permission' && this.cancelOnPermission) {
      setImmediate(() => void this.controller.cancel());
    } else if (msg.type === 'permission') {
      const option = msg.options.find((o) => o.kind === this.permissionKind);
      setImmediate(() => void this.controller.onPageMessage({ type: 'permissionReply', requestId: msg.requestId, optionId: option?.optionId ?? null }));
    } else if (msg.type === 'question') {
      setImmediate(() => void this.controller.onPageMessage({ type: 'questionReply', requestId: msg.requestId, answer: this.answer }));
    }
  }
}

let running: RunningAgent | undefined;
let work = '';
let ws = '';
const page = new Page();
let controller: ChatController;
let modelLog = '';
let sessionOf: string | null = null;
/** openprogram.switchCode as the tests set it, and when "bring the code?" was asked. */
let switchSetting: 'always' | 'ask' | 'never' = 'always';
const codeAsks: number[] = [];
/** The "your own changes would be replaced" questions, and the answer the test gives. */
const ownAsks: string[] = [];
let ownAnswer: 'switch' | 'keep' | 'choose' | 'cancel' = 'switch';
/** The files the test checks in the file-by-file pick (switched too); the rest are kept. */
let ownChosen: string[] = [];
const ownPicks: string[][] = [];

/** The last user message the scripted model was sent. */
function lastModelInput(): string {
  const calls = readFileSync(modelLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { messages: { role: string; content: unknown }[] });
  const users = calls[calls.length - 1].messages.filter((m) => m.role === 'user');
  const c = users[users.length - 1].content;
  return typeof c === 'string' ? c : JSON.stringify(c);
}

before(async () => {
  if (noServer) return;
  work = mkdtempSync(join(tmpdir(), 'op-vscode-'));
  ws = join(work, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'hello.py'), ORIGINAL);
  writeFileSync(join(ws, 'two.txt'), 'a\nb\nc\nd\ne\n');
  const script = join(work, 'script.json');
  writeFileSync(script, JSON.stringify([
    { text: 'Editing.', tool_calls: [{ name: 'write_file', arguments: { path: 'hello.py', content: UPDATED } }] },
    { text: 'Done editing.' },
    { text: 'Writing notes.', tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'n\n' } }] },
    { text: 'Notes saved.' },
    { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } }] },
    { text: 'Blue it is.' },
    { text: 'A fresh start.' },
    { text: 'Waiting.', tool_calls: [{ name: 'run_command', arguments: { command: 'sleep 30' } }] },
    { text: 'Writing more.', tool_calls: [{ name: 'write_file', arguments: { path: 'more.txt', content: 'm\n' } }] },
    { text: 'Explained.' },
    { text: 'Seen what you attached.' },
    { text: 'Forked reply.' },
    { text: 'In the background.', tool_calls: [{ name: 'write_file', arguments: { path: 'bg.txt', content: 'bg\n' } }] },
    { text: 'Background done.' },
    { text: 'Two changes.', tool_calls: [{ name: 'write_file', arguments: { path: 'two.txt', content: 'A\nb\nc\nd\nE\n' } }] },
    { text: 'Reviewed.' },
  ]));
  // a custom command (the server substitutes $ARGUMENTS), and the model's input recorded
  mkdirSync(join(ws, '.openprogram', 'commands'), { recursive: true });
  writeFileSync(join(ws, '.openprogram', 'commands', 'explain.md'), '---\ndescription: Explain a file\nargument-hint: PATH\n---\nExplain $ARGUMENTS briefly.\n');
  process.env.OPENPROGRAM_SCRIPTED_LOG = modelLog = join(work, 'model.jsonl');
  running = await startAgent(server, ws, join(work, 'home'), `scripted:${script}`);
  // branch switches bring their code along (the question is settled: see switchCode.test.ts)
  controller = new ChatController(running.agent, new Memento() as never, {
    setting: () => switchSetting, ask: (choices) => {
      codeAsks.push(page.messages.length);
      return Promise.resolve(choices.find((c) => !c.restore && !c.remember));
    },
    askOwn: (message) => {
      ownAsks.push(message);
      return Promise.resolve(ownAnswer);
    },
    chooseOwn: (files) => {
      ownPicks.push(files);
      return Promise.resolve(ownChosen);
    },
  });
  page.controller = controller;
  controller.attach(page);
});

after(async () => {
  await running?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const tools = (): ToolItem[] => controller.state.items.filter((i): i is ToolItem => i.kind === 'tool');

test('host logic against the real server', { skip: noServer }, async (t) => {
  await t.test('an edit approved on the card is applied and checkpointed', async () => {
    await controller.send('make a function');
    const s = controller.state;
    assert.ok(s.sessionId, 'the new session was adopted');
    assert.equal(page.sessionAtPermission, s.sessionId, 'bound at turn.started, before the turn ended');
    assert.equal(s.busy, false);
    assert.equal(readFileSync(join(ws, 'hello.py'), 'utf8'), UPDATED);
    const card = tools()[0];
    assert.equal(card.name, 'write_file');
    assert.equal(card.status, 'completed');
    assert.ok(card.permission?.choice, 'the card recorded the choice');
    assert.equal(card.diff?.oldText, ORIGINAL);
    assert.ok(s.items.some((i) => i.kind === 'message' && i.role === 'assistant' && i.text.includes('Done editing.')));
    assert.ok(s.items.some((i) => i.kind === 'checkpoint' && i.files?.some((f) => f.path === 'hello.py')));
    assert.ok(page.messages.some((m) => m.type === 'event' && m.event.type === 'text.delta'), 'the reply streamed');
    const usage = s.items.find((i) => i.kind === 'message' && i.role === 'assistant' && i.usage);
    assert.ok(usage, 'the reply shows the turn\'s token usage');
    // Reloaded from history: the checkpoint card and the usage come back.
    await controller.loadSession(s.sessionId!);
    const again = controller.state;
    assert.ok(again.items.some((i) => i.kind === 'checkpoint' && i.files?.some((f) => f.path === 'hello.py')), 'history keeps the checkpoint card');
    assert.ok(again.items.some((i) => i.kind === 'message' && i.role === 'assistant' && i.usage), 'history keeps the usage');
  });

  await t.test('with the panel hidden, the notification answers the approval', async () => {
    page.visible = false;
    ui.responder = (kind, _message, items) => Promise.resolve(kind === 'warning' ? items.find((i) => /allow once/i.test(i)) : undefined);
    try {
      await controller.send('write notes');
    } finally {
      page.visible = true;
    }
    assert.equal(readFileSync(join(ws, 'notes.txt'), 'utf8'), 'n\n');
    assert.ok(ui.shown.some((n) => n.kind === 'warning' && n.items.some((i) => /allow once/i.test(i))));
  });

  await t.test('a question is answered inline', async () => {
    await controller.send('ask me');
    const q = controller.state.items.find((i) => i.kind === 'question');
    assert.ok(q && q.kind === 'question' && q.answer === 'blue');
    assert.ok(controller.state.items.some((i) => i.kind === 'message' && i.text.includes('Blue it is.')));
  });

  await t.test('a restore and its undo round-trip through the checkpoint store', async () => {
    const cp = controller.state.items.find((i) => i.kind === 'checkpoint');
    assert.ok(cp && cp.kind === 'checkpoint');
    const { checkpoints } = await running!.agent.request<{ checkpoints: { id: string; parentId: string | null }[] }>(Requests.checkpoints, { sessionId: controller.state.sessionId });
    const turn = checkpoints.find((c) => c.id === cp.checkpointId);
    assert.ok(turn?.parentId);
    const res = await running!.agent.request<RestoreResult>(Requests.restore, { checkpointId: turn.parentId, paths: ['hello.py'] });
    assert.equal(readFileSync(join(ws, 'hello.py'), 'utf8'), ORIGINAL);
    await running!.agent.request<RestoreResult>(Requests.restore, { checkpointId: res.safetyCheckpointId, paths: res.restored });
    assert.equal(readFileSync(join(ws, 'hello.py'), 'utf8'), UPDATED);
  });

  await t.test('a fork from the root makes a second branch; checkout shows the first again', async () => {
    const first = controller.state.items.find((i) => i.kind === 'message' && i.role === 'user');
    assert.ok(first && first.kind === 'message' && first.nodeId);
    await controller.send('start over', null);
    assert.deepEqual(
      controller.state.items.filter((i) => i.kind === 'message').map((i) => (i.kind === 'message' ? i.text : '')),
      ['start over', 'A fresh start.'],
    );
    const branches: BranchInfo[] = controller.state.branches;
    assert.equal(branches.length, 2);
    const other = branches.find((b) => !b.active);
    assert.ok(other);
    await controller.checkout(other.headId);
    assert.ok(controller.state.items.some((i) => i.kind === 'message' && i.text === 'make a function'));
    // the first branch's code (its newest turn's checkpoint) is what the workspace has
    assert.equal(readFileSync(join(ws, 'hello.py'), 'utf8'), UPDATED);
    assert.equal(readFileSync(join(ws, 'notes.txt'), 'utf8'), 'n\n');
    // The restored chain interleaves text and tool cards as they streamed.
    const shape = controller.state.items.slice(0, 4).map((i) => (i.kind === 'message' ? i.text : i.kind));
    assert.deepEqual(shape, ['make a function', 'Editing.', 'tool', 'Done editing.']);
    assert.ok(!controller.state.items.some((i) => i.kind === 'message' && i.text === 'start over'));
  });

  await t.test('a switch that would replace the user\'s own changes asks first: keep them (file by file), or switch them too', async () => {
    const first = controller.state.branches.find((b) => b.active)!;
    const other = controller.state.branches.find((b) => !b.active)!;
    writeFileSync(join(ws, 'hello.py'), 'mine\n'); // edited by hand since the branch's last turn
    workspace.workspaceFolders = [{ uri: { scheme: 'file', path: ws } }]; // the host reads the files as VS Code would
    t.after(() => { workspace.workspaceFolders = undefined; });
    ownAsks.length = 0;
    ownAnswer = 'choose';
    ownChosen = []; // nothing checked: every own change stays
    await controller.checkout(other.headId);
    assert.equal(ownAsks.length, 1);
    assert.match(ownAsks[0], /Your own changes to a file would be replaced by the branch's code: hello\.py\./);
    assert.deepEqual(ownPicks, [['hello.py']], 'asked file by file');
    assert.equal(readFileSync(join(ws, 'hello.py'), 'utf8'), 'mine\n', 'kept');
    assert.ok(controller.state.items.some((i) => i.kind === 'message' && i.text === 'start over'), 'the conversation switched');
    assert.ok(controller.state.items.some((i) => i.kind === 'note' && /Kept your own changes to hello\.py; the rest of the workspace has the branch's code/.test(i.text)));
    ownAnswer = 'switch';
    await controller.checkout(first.headId);
    assert.equal(ownAsks.length, 2, 'asked again: hello.py is not the shown branch\'s code either');
    assert.equal(readFileSync(join(ws, 'hello.py'), 'utf8'), UPDATED, 'switched too');
    assert.ok(controller.lastSwitch?.safety, 'the switch is undoable');
    // Undo brings the user's version back (the safety checkpoint held it), then switch again
    assert.ok(await controller.undoSwitch());
    assert.equal(readFileSync(join(ws, 'hello.py'), 'utf8'), 'mine\n', "the user's version is back");
    await controller.checkout(first.headId);
    assert.equal(readFileSync(join(ws, 'hello.py'), 'utf8'), UPDATED);
  });

  await t.test('cancel stops a running command and the turn ends cancelled', async () => {
    page.cancelOnTool = 'run_command';
    try {
      await controller.send('wait a while');
    } finally {
      page.cancelOnTool = null;
    }
    assert.equal(controller.state.busy, false);
    assert.ok(controller.state.items.some((i) => i.kind === 'note' && i.text === 'Cancelled.'));
    const cut = () => tools().find((c) => c.name === 'run_command');
    assert.equal(cut()?.cancelled, true, 'the card says the cancel cut the call');
    await controller.loadSession(controller.state.sessionId!);
    assert.equal(cut()?.cancelled, true, 'and so it does after a reload');
  });

  await t.test('cancelling with an approval open (notification shown) marks the card withdrawn', async () => {
    page.visible = false;
    page.cancelOnPermission = true;
    ui.shown.length = 0;
    // The user ignores the notification.
    ui.responder = () => new Promise<string | undefined>(() => undefined);
    try {
      await controller.send('write more');
    } finally {
      page.visible = true;
      page.cancelOnPermission = false;
    }
    const card = tools().find((c) => c.input.path === 'more.txt');
    assert.ok(card?.permission, 'the card had the prompt');
    assert.equal(card.permission.withdrawn, 'cancelled');
    assert.equal(card.permission.choice, null);
    assert.ok(ui.shown.some((n) => n.kind === 'warning' && /allow/i.test(n.message)), 'the notification fallback was used');
    assert.ok(ui.shown.some((n) => n.kind === 'info' && /withdrawn \(the turn was cancelled\)/.test(n.message)));
    assert.ok(!existsSync(join(ws, 'more.txt')));
    assert.ok(page.messages.some((m) => m.type === 'event' && m.event.type === 'permission.withdrawn'));
  });
});

test('history opens on its last page and scrolling up loads the pages before', { skip: noServer }, async () => {
  const sessionId = controller.state.sessionId;
  assert.ok(sessionId);
  const whole = await running!.agent.request<{ nodes: { id: string; role: string; text: string }[] }>(
    Requests.history, { sessionId, limit: 10000 });
  assert.ok(whole.nodes.length > 4);
  controller.historyPage = 2;
  try {
    await controller.loadSession(sessionId);
    assert.equal(controller.state.hasMore, true);
    const shown = () => controller.state.items.filter((i) => i.kind === 'message').length;
    const firstPage = shown();
    for (let n = 0; n < 20 && controller.state.hasMore; n++) {
      await controller.onPageMessage({ type: 'loadOlder' });
    }
    assert.equal(controller.state.hasMore, false);
    assert.ok(shown() > firstPage);
    assert.equal(controller.state.oldestNodeId, whole.nodes[0].id);
    const users = whole.nodes.filter((n) => n.role === 'user').map((n) => n.text);
    const drawn = controller.state.items.flatMap((i) => (i.kind === 'message' && i.role === 'user' ? [i.text] : []));
    assert.deepEqual(drawn, users);
  } finally {
    controller.historyPage = 200;
  }
});

test('slash commands, attachments and the context meter against the real server', { skip: noServer }, async (t) => {
  const notes = () => controller.state.items.filter((i) => i.kind === 'note').map((i) => (i.kind === 'note' ? i.text : ''));
  const users = () => controller.state.items.flatMap((i) => (i.kind === 'message' && i.role === 'user' ? [i] : []));
  const hello = pathToFileURL(join(ws, 'hello.py')).toString();

  await t.test('an unknown command is not sent, and says so', async () => {
    const before = users().length;
    page.messages.length = 0;
    await controller.submit('/nosuch thing');
    assert.equal(users().length, before, 'no turn started');
    assert.match(notes().at(-1) ?? '', /Unknown command \/nosuch: nothing was sent\. Commands here: .*\/explain/);
    assert.ok(page.messages.some((m) => m.type === 'setInput' && m.text === '/nosuch thing'), 'the text goes back into the input');
  });

  await t.test('the / popup lists built-ins and the workspace command; @ lists files', async () => {
    page.messages.length = 0;
    await controller.onPageMessage({ type: 'complete', requestId: 7, kind: 'commands', query: 'ex' });
    await controller.onPageMessage({ type: 'complete', requestId: 8, kind: 'files', query: 'helo' });
    const got = page.messages.filter((m) => m.type === 'completions');
    assert.deepEqual(got.map((m) => m.type === 'completions' && m.requestId), [7, 8]);
    const [cmds, files] = got as Extract<HostMessage, { type: 'completions' }>[];
    assert.equal(cmds.items[0].insert, '/explain ');
    assert.equal(files.items[0].label, 'hello.py');
    assert.equal(files.items[0].uri, hello);
  });

  await t.test('a custom command is sent as typed; the model gets its body with the arguments', async () => {
    await controller.submit('/explain hello.py');
    assert.equal(users().at(-1)?.text, '/explain hello.py');
    assert.match(lastModelInput(), /Explain hello\.py briefly\./);
    assert.ok(controller.state.items.some((i) => i.kind === 'message' && i.text === 'Explained.'));
  });

  await t.test('the active file, a selection with its diagnostics and an @-file reach the model and history', async () => {
    controller.setActiveFile({ uri: hello, path: 'hello.py' });
    controller.attachments.addSelection({ uri: hello, path: 'hello.py', text: 'def greet():\n',
      range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } },
      diagnostics: [{ range: { start: { line: 0, character: 4 }, end: { line: 0, character: 9 } }, message: 'missing docstring', severity: 2, source: 'lint' }] });
    await controller.onPageMessage({ type: 'attachFile', uri: pathToFileURL(join(ws, 'notes.txt')).toString(), path: 'notes.txt' });
    assert.deepEqual(controller.state.attachments.map((c) => c.label), ['hello.py', 'hello.py:1', 'hello.py:1 (1)', 'notes.txt']);
    await controller.onPageMessage({ type: 'removeAttachment', id: controller.state.attachments[3].id });
    await controller.onPageMessage({ type: 'attachFile', uri: pathToFileURL(join(ws, 'notes.txt')).toString(), path: 'notes.txt' });
    await controller.submit('look at these');
    const input = lastModelInput();
    assert.match(input, /<file path="hello\.py">\ndef greet\(\):/);
    assert.match(input, /<selection path="hello\.py" lines="1">\ndef greet\(\):\n<\/selection>/);
    assert.match(input, /hello\.py:1:5: warning: missing docstring \[lint\]/);
    assert.match(input, /<file path="notes\.txt">\nn\n<\/file>/);
    assert.match(input, /look at these$/);
    assert.deepEqual(users().at(-1)?.context?.map((a) => a.label), ['hello.py', 'hello.py:1', 'hello.py:1 (1)', 'notes.txt']);
    assert.equal(controller.state.attachments.length, 0, 'the queue went with it; the unchanged active file is not sent again');
    controller.setActiveFile({ uri: hello, path: 'hello.py', version: 2 });
    assert.deepEqual(controller.state.attachments.map((c) => c.id), ['active'], 'an edit brings it back');
    await controller.loadSession(controller.state.sessionId!);
    const stored = users().at(-1)?.context;
    assert.equal(stored?.[0].text, UPDATED, 'history shows what the model saw');
    assert.deepEqual(stored?.map((a) => a.kind), ['file', 'selection', 'diagnostics', 'file']);
    assert.ok(controller.state.context && controller.state.context.usedTokens > 0, 'the meter comes back from history');
    controller.setActiveFile(null);
  });

  await t.test('/fork NAME puts the last message back; sending it replaces it on a named branch', async () => {
    const last = users().at(-1)!;
    const branches = controller.state.branches.length;
    page.messages.length = 0;
    await controller.submit('/fork second try');
    const asked = page.messages.find((m) => m.type === 'startFork');
    assert.deepEqual(asked, { type: 'startFork', nodeId: last.nodeId, name: 'second try' });
    assert.equal(users().at(-1)?.text, 'look at these', 'nothing was sent yet');
    // the page starts the fork (main.ts startFork): "bring the code?" is asked then, not at Send
    switchSetting = 'ask';
    codeAsks.length = 0;
    await controller.onPageMessage({ type: 'forkStarted', nodeId: last.predecessor });
    assert.equal(codeAsks.length, 1, 'asked at Fork');
    // the page sends the edited message as the fork (see main.ts startFork/submit)
    await controller.onPageMessage({ type: 'send', text: 'look at these, differently', forkFrom: last.predecessor, forkName: 'second try' });
    switchSetting = 'always';
    assert.equal(codeAsks.length, 1, 'not asked again at Send');
    assert.equal(users().at(-1)?.text, 'look at these, differently');
    assert.ok(!users().some((u) => u.text === 'look at these'), 'the new branch does not have the old message');
    assert.equal(controller.state.branches.length, branches + 1);
    assert.ok(controller.state.branches.some((b) => b.active && b.name === 'second try'), 'the branch has the name');
    const { nodes } = await running!.agent.request<{ nodes: { id: string; predecessor: string | null }[] }>(Requests.history, { sessionId: controller.state.sessionId });
    assert.equal(nodes.find((n) => n.id === users().at(-1)?.nodeId)?.predecessor, last.predecessor);
  });

  await t.test('/mode, /model, /undo and /new are carried out by the editor', async () => {
    const sent = users().length;
    await controller.submit('/mode plan');
    assert.equal(ui.settings.get('openprogram.permissionMode'), 'plan');
    await controller.submit('/mode yolo');
    assert.match(notes().at(-1) ?? '', /not a permission mode/);
    await controller.submit('/model offline');
    assert.equal(ui.settings.get('openprogram.model'), 'offline');
    ui.executed.length = 0;
    await controller.submit('/model');
    await controller.submit('/mode');
    // Undo This Turn as the extension carries it out: one undo restore on the real server
    const agent = running!.agent;
    ui.commandHandlers.set('openprogram.undoTurn', (arg: { checkpointId: string }) =>
      agent.request<RestoreResult>(Requests.restore, { checkpointId: arg.checkpointId, undo: true }));
    const listTurns = async (): Promise<{ id: string; undoneBy?: string }[]> => {
      const { checkpoints } = await agent.request<{ checkpoints: { id: string; kind: string; files: unknown[]; undoneBy?: string }[] }>(
        Requests.checkpoints, { sessionId: controller.state.sessionId });
      return checkpoints.filter((c) => c.kind === 'turn' && c.files.length > 0);
    };
    const turns = (await listTurns()).map((c) => c.id);
    assert.equal(turns.length, 2, 'two turns changed files');
    // another editor (or the CLI) undid the newest turn: the server says so, /undo skips it
    await agent.request<RestoreResult>(Requests.restore, { checkpointId: turns[0], undo: true });
    await controller.submit('/undo');
    assert.match(notes().at(-1) ?? '', /\/undo: “.*” undone \(\d+ files?\); Undo Restore brings it back/);
    await controller.submit('/undo');
    assert.match(notes().at(-1) ?? '', /\/undo: every turn of this session that changed files is undone already/);
    assert.deepEqual(ui.executed.map((e) => e.id), ['openprogram.pickModel', 'openprogram.pickMode', 'openprogram.undoTurn']);
    // the newest turn not undone yet (Undo This Turn on it), not the one undone elsewhere
    assert.deepEqual(ui.executed.slice(2).map((e) => (e.args[0] as { checkpointId: string }).checkpointId), [turns[1]]);
    assert.deepEqual((await listTurns()).map((c) => Boolean(c.undoneBy)), [true, true], 'the server knows both are undone');
    assert.equal(users().length, sent, 'none of them was sent to the model');
    sessionOf = controller.state.sessionId;
    await controller.submit('/new');
    assert.equal(controller.state.sessionId, null);
  });

  await t.test('/new while a turn runs leaves it running in the background; its approval comes by notification', async () => {
    await controller.loadSession(sessionOf!);
    let left = false;
    const hook = page.post.bind(page);
    page.post = (msg: HostMessage) => {
      hook(msg);
      if (!left && msg.type === 'event' && msg.event.type === 'turn.started') {
        left = true;
        void controller.submit('/new');
      }
    };
    ui.shown.length = 0;
    ui.responder = (kind, _message, items) => Promise.resolve(kind === 'warning' ? items.find((i) => /allow once/i.test(i)) : undefined);
    try {
      await controller.submit('write in the background');
    } finally {
      page.post = hook;
    }
    assert.ok(left);
    assert.equal(controller.state.sessionId, null, 'the panel stayed on the new conversation');
    assert.equal(controller.state.busy, false);
    assert.equal(controller.state.items.length, 0, 'nothing of the old turn was drawn here');
    assert.ok(ui.shown.some((n) => n.kind === 'warning' && /bg\.txt/.test(n.message)), 'asked by notification');
    assert.equal(readFileSync(join(ws, 'bg.txt'), 'utf8'), 'bg\n', 'the turn went on and finished');
    const { nodes } = await running!.agent.request<{ nodes: { role: string; text: string }[] }>(Requests.history, { sessionId: sessionOf });
    assert.ok(nodes.some((n) => n.role === 'assistant' && n.text.includes('Background done.')));
  });

  await t.test('an edit reviewed in the diff editor writes only the accepted hunks; card and record say so', async () => {
    const hook = page.post.bind(page);
    let opened: unknown[] | undefined;
    page.post = (msg: HostMessage) => {
      if (msg.type !== 'permission') return hook(msg);
      page.messages.push(msg);
      setImmediate(() => void (async () => {
        // the card's "Review in diff editor", then the second hunk's lens (reject), then Apply
        await controller.onPageMessage({ type: 'reviewEdit', requestId: msg.requestId });
        opened = ui.executed.find((c) => c.id === 'vscode.diff')?.args;
        const [, right] = (opened ?? []) as { scheme: string; path: string; query: string }[];
        assert.equal(controller.reviews.provideTextDocumentContent(right as never), 'A\nb\nc\nd\nE\n', 'every hunk accepted at first');
        assert.deepEqual(controller.reviews.hunkList(msg.requestId).map((h) => [h.label, h.detail, h.accepted]), [
          ['Hunk 1 of 2: @@ -1,1 +1,1 @@', '-a  +A', true], ['Hunk 2 of 2: @@ -5,1 +5,1 @@', '-e  +E', true]]);
        controller.reviews.choose(msg.requestId, [0, 1]);
        controller.reviews.toggle(msg.requestId, 1);
        assert.equal(controller.reviews.provideTextDocumentContent(right as never), 'A\nb\nc\nd\ne\n', 'the right side is what will be written');
        assert.ok(controller.reviews.submit(msg.requestId));
      })());
    };
    ui.executed.length = 0;
    try {
      await controller.send('change two lines');
    } finally {
      page.post = hook;
    }
    assert.ok(opened, 'the review opened in the diff editor');
    assert.equal(readFileSync(join(ws, 'two.txt'), 'utf8'), 'A\nb\nc\nd\ne\n', 'only the accepted hunk was written');
    const card = tools().find((c) => c.name === 'write_file' && c.input.path === 'two.txt');
    assert.deepEqual(card?.permission?.acceptedHunks, { accepted: [0], total: 2 });
    const sid = controller.state.sessionId!;
    await controller.loadSession(sid);
    const again = tools().find((c) => c.name === 'write_file' && c.input.path === 'two.txt');
    assert.equal(again?.decided, 'Allowed once: 1 of 2 hunks (1)', 'the approval record says which hunks');
    assert.equal(controller.reviews.requestOf({ scheme: 'openprogram-review', query: 'new&x' } as never), undefined);
  });
});
