// The chat controller against a real openprogram-lsp over stdio: approvals on the card and by
// notification, questions, checkpoints, forks and branch switches, as the panel drives them.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ChatController, type ChatSink } from '../src/chat/controller';
import { Requests, type BranchInfo, type RestoreResult } from '../src/protocol';
import type { HostMessage } from '../src/webview/messages';
import type { ToolItem } from '../src/webview/state';
import { startAgent, type RunningAgent } from './support/agent';
import { ui } from './support/vscode';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const server = join(repo, '.venv', 'bin', 'openprogram-lsp');
const ORIGINAL = 'print("hello")\n';
const UPDATED = 'def greet():\n    print("hello")\n';

class Memento {
  private data = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.data.keys()];
  }
  get<T>(key: string, dflt?: T): T | undefined {
    return (this.data.has(key) ? this.data.get(key) : dflt) as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.data.delete(key);
    else this.data.set(key, value);
    return Promise.resolve();
  }
}

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

before(async () => {
  if (!existsSync(server)) return;
  work = mkdtempSync(join(tmpdir(), 'op-vscode-'));
  ws = join(work, 'ws');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(ws);
  writeFileSync(join(ws, 'hello.py'), ORIGINAL);
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
  ]));
  running = await startAgent(server, ws, join(work, 'home'), `scripted:${script}`);
  // branch switches bring their code along (the question is settled: see switchCode.test.ts)
  controller = new ChatController(running.agent, new Memento() as never, {
    setting: () => 'always', ask: () => Promise.resolve(undefined),
  });
  page.controller = controller;
  controller.attach(page);
});

after(async () => {
  await running?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const tools = (): ToolItem[] => controller.state.items.filter((i): i is ToolItem => i.kind === 'tool');

test('host logic against the real server', { skip: !existsSync(server) && 'no .venv/bin/openprogram-lsp' }, async (t) => {
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

  await t.test('cancel stops a running command and the turn ends cancelled', async () => {
    page.cancelOnTool = 'run_command';
    try {
      await controller.send('wait a while');
    } finally {
      page.cancelOnTool = null;
    }
    assert.equal(controller.state.busy, false);
    assert.ok(controller.state.items.some((i) => i.kind === 'note' && i.text === 'Cancelled.'));
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

test('history opens on its last page and scrolling up loads the pages before', { skip: !existsSync(server) && 'no .venv/bin/openprogram-lsp' }, async () => {
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
