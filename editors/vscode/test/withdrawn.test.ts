// An approval nobody answers, against a real server with a one-second approval timeout: the
// server withdraws it, the card says so, and the notification shown with the panel hidden is
// followed by one saying that answering it no longer has an effect.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ChatController, type ChatSink } from '../src/chat/controller';
import type { HostMessage } from '../src/webview/messages';
import type { ToolItem } from '../src/webview/state';
import { startAgent, type RunningAgent } from './support/agent';
import { Memento, ui } from './support/vscode';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
// OPENPROGRAM_LSP: another command for the same server (the suite's fork client, tests/forkclient.py)
const server = process.env.OPENPROGRAM_LSP ?? join(repo, '.venv', 'bin', 'openprogram-lsp');
// without the server these tests are skipped, except in CI, where a missing server is a failure
const noServer = !existsSync(server) && !process.env.CI && 'no .venv/bin/openprogram-lsp';

/** A hidden panel: it records messages and never answers. */
class HiddenPage implements ChatSink {
  visible = false;
  messages: HostMessage[] = [];
  post(msg: HostMessage): void {
    this.messages.push(msg);
  }
}

let running: RunningAgent | undefined;
let work = '';
let ws = '';

before(async () => {
  if (noServer) return;
  work = mkdtempSync(join(tmpdir(), 'op-vscode-withdrawn-'));
  ws = join(work, 'ws');
  mkdirSync(ws);
  const script = join(work, 'script.json');
  writeFileSync(script, JSON.stringify([
    { text: 'Writing.', tool_calls: [{ name: 'write_file', arguments: { path: 'late.txt', content: 'x\n' } }] },
    { text: 'Not approved, so nothing was written.' },
  ]));
  running = await startAgent(server, ws, join(work, 'home'), `scripted:${script}`, { approvalTimeout: 1 });
});

after(async () => {
  await running?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('an approval that times out is withdrawn on the card and after the notification', { skip: noServer }, async () => {
  const page = new HiddenPage();
  const controller = new ChatController(running!.agent, new Memento() as never);
  controller.attach(page);
  ui.shown.length = 0;
  ui.responder = () => new Promise<string | undefined>(() => undefined); // the user looks away
  await controller.send('write late.txt');

  const card = controller.state.items.find((i): i is ToolItem => i.kind === 'tool' && i.input.path === 'late.txt');
  assert.ok(card?.permission, 'the card had the prompt');
  assert.equal(card.permission.withdrawn, 'timeout');
  assert.equal(card.permission.choice, null);
  assert.ok(!existsSync(join(ws, 'late.txt')));
  assert.ok(controller.state.items.some((i) => i.kind === 'message' && i.text.includes('Not approved')), 'the turn went on');
  const kinds = ui.shown.map((n) => `${n.kind}:${n.message}`);
  assert.ok(kinds.some((k) => k.startsWith('warning:OpenProgram: allow')), `the notification asked: ${JSON.stringify(kinds)}`);
  assert.ok(kinds.some((k) => /^info:.*withdrawn \(no answer in time\)/.test(k)), `and was declared void: ${JSON.stringify(kinds)}`);
  // What the hidden page is sent when it becomes visible again holds the same card.
  controller.resync();
  const snap = page.messages[page.messages.length - 1];
  assert.ok(snap.type === 'snapshot' && snap.state.items.some((i) => i.kind === 'tool' && i.permission?.withdrawn === 'timeout'));
  controller.dispose();
});
