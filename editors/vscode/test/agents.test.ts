// The subagents tree: its items, and against a real server a subagent run that the tree lists and
// whose branch the chat checks out when the item is clicked.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AgentTree, affectsAgents, describeAgent } from '../src/agents/tree';
import { ChatController, type ChatSink } from '../src/chat/controller';
import { Requests, type AgentInfo, type EventParams, type SessionInfo } from '../src/protocol';
import type { HostMessage } from '../src/webview/messages';
import { startAgent, type RunningAgent } from './support/agent';
import { Memento } from './support/vscode';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
// OPENPROGRAM_LSP: another command for the same server (the suite's fork client, tests/forkclient.py)
const server = process.env.OPENPROGRAM_LSP ?? join(repo, '.venv', 'bin', 'openprogram-lsp');
// without the server these tests are skipped, except in CI, where a missing server is a failure
const noServer = !existsSync(server) && !process.env.CI && 'no .venv/bin/openprogram-lsp';

test('an agent item shows its label and status; only subagent events refresh the tree', () => {
  const done: AgentInfo = { id: 'a1', sessionId: 's', headId: 'h', label: 'tests', status: 'done', kind: 'agent', createdAt: '' };
  assert.deepEqual(describeAgent(done), {
    label: 'tests',
    description: 'done',
    tooltip: 'tests (agent, done)\nClick to check out its branch.',
  });
  const queued = describeAgent({ id: 'a2', sessionId: 's', status: 'running', queued: true, kind: 'message', error: 'x', createdAt: '' });
  assert.equal(queued.label, 'a2');
  assert.equal(queued.description, 'message · queued');
  assert.match(queued.tooltip, /^a2 \(message, queued\)\nx$/);
  const ev = (type: string): EventParams => ({ type, sessionId: 's', data: {} });
  assert.equal(affectsAgents(ev('subagent.started')), true);
  assert.equal(affectsAgents(ev('subagent.ended')), true);
  assert.equal(affectsAgents(ev('text.delta')), false);
});

/** A page that approves everything and remembers what it was sent. */
class Page implements ChatSink {
  visible = true;
  messages: HostMessage[] = [];
  controller!: ChatController;
  post(msg: HostMessage): void {
    this.messages.push(msg);
    if (msg.type === 'permission') {
      const option = msg.options.find((o) => o.kind === 'allow_once');
      setImmediate(() => void this.controller.onPageMessage({ type: 'permissionReply', requestId: msg.requestId, optionId: option?.optionId ?? null }));
    }
  }
}

let running: RunningAgent | undefined;
let work = '';

before(async () => {
  if (noServer) return;
  work = mkdtempSync(join(tmpdir(), 'op-vscode-agents-'));
  const ws = join(work, 'ws');
  mkdirSync(ws);
  const script = join(work, 'script.json');
  // Parent and child share the script; the replies that may race are identical.
  writeFileSync(script, JSON.stringify([
    { tool_calls: [{ name: 'agent', arguments: { prompt: 'help', label: 'kid' } }] },
    { text: 'ok' }, { text: 'ok' }, { text: 'ok' }, { text: 'ok' },
  ]));
  running = await startAgent(server, ws, join(work, 'home'), `scripted:${script}`);
});

after(async () => {
  await running?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('the tree lists a subagent run; opening it checks out its branch', { skip: noServer }, async () => {
  const agent = running!.agent;
  const page = new Page();
  const controller = new ChatController(agent, new Memento() as never);
  page.controller = controller;
  controller.attach(page);
  const tree = new AgentTree(agent, () => controller.state.sessionId);
  const refreshed: unknown[] = [];
  tree.onDidChangeTreeData((x) => refreshed.push(x));
  agent.onEvent((e) => {
    if (affectsAgents(e)) tree.refresh();
  });
  assert.deepEqual(await tree.getChildren(), [], 'no session, no subagents');

  await controller.send('delegate');
  const sessionId = controller.state.sessionId;
  assert.ok(sessionId);
  // Wait (bounded) for the child to end and the session to settle: the child's report may come
  // back as a follow-up turn after the parent's, so idle must hold for a few polls in a row.
  let calm = 0;
  for (let i = 0; i < 400 && calm < 4; i++) {
    const { agents } = await agent.request<{ agents: AgentInfo[] }>(Requests.agents, { sessionId });
    const { sessions } = await agent.request<{ sessions: SessionInfo[] }>(Requests.sessions, {});
    const idle = sessions.find((s) => s.id === sessionId)?.status === 'idle';
    calm = idle && agents.length > 0 && agents.every((a) => a.status !== 'running') ? calm + 1 : 0;
    await pause(50);
  }
  assert.ok(refreshed.length >= 2, 'subagent.started and subagent.ended refreshed the tree');
  // The child streamed on the same session while the parent ran: none of it is in the parent's
  // reply (mixed, the two "ok"s would read "okok"), and its report is labelled as one.
  const said = controller.state.items.flatMap((i) => (i.kind === 'message' && i.role === 'assistant' ? [i.text] : []));
  assert.ok(said.length === 2 && said.every((t) => t === 'ok'), `the parent's replies (its own and the one after the report): ${JSON.stringify(said)}`);
  assert.ok(!controller.state.items.some((i) => i.kind === 'message' && i.role === 'user' && i.text.includes('[Agent')), 'no report shown as You');

  const nodes = await tree.getChildren();
  const kid = nodes.find((n) => n.agent.label === 'kid');
  assert.ok(kid, `the tree lists the run: ${JSON.stringify(nodes)}`);
  assert.equal(kid.agent.status, 'done');
  const item = tree.getTreeItem(kid);
  assert.equal(item.label, 'kid');
  assert.equal(item.description, 'done');
  assert.equal(item.command?.command, 'openprogram.openSelectedAgent');
  assert.equal(item.command?.arguments, undefined, 'the row command reads the selection');
  assert.ok(kid.agent.headId);

  // What openprogram.openAgent does with the clicked node (a late follow-up turn refuses it: retry).
  for (let i = 0; ; i++) {
    try {
      await controller.checkout(kid.agent.headId, kid.agent.sessionId);
      break;
    } catch (err) {
      if (i >= 100 || (err as { code?: number }).code !== -32002) throw err;
      await pause(50);
    }
  }
  assert.equal(controller.state.headId, kid.agent.headId);
  assert.ok(
    controller.state.items.some((i) => i.kind === 'message' && i.role === 'report' && i.text.includes('help')),
    `the chat shows the subagent's branch: ${JSON.stringify(controller.state.items.map((i) => (i.kind === 'message' ? i.text : i.kind)))}`,
  );
  const { branches } = await agent.request<{ branches: { headId: string; active: boolean }[] }>(Requests.branches, { sessionId });
  assert.equal(branches.find((b) => b.active)?.headId, kid.agent.headId, 'the session head moved to the subagent branch');
  controller.dispose();
  tree.dispose();
});
