// A window reloaded mid-turn re-attaches: the chat controller against a real kept server
// (`serve --tcp --keep-turns`, started as the extension starts it). The first window sends a
// turn and goes while its approval is open; the next one shows the turn once, is asked the
// approval again, and the turn streams on to its end.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ChatController, type ChatSink } from '../src/chat/controller';
import { attachOrStart, endKept } from '../src/kept';
import type { HostMessage } from '../src/webview/messages';
import { connectAgent } from './support/agent';
import { Memento } from './support/vscode';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const server = process.env.OPENPROGRAM_LSP ?? join(repo, '.venv', 'bin', 'openprogram-lsp');
const noServer = !existsSync(server) && !process.env.CI && 'no .venv/bin/openprogram-lsp';

/** A chat page that records what it is sent and answers approvals when told to. */
class Page implements ChatSink {
  visible = true;
  messages: HostMessage[] = [];
  permissions: Extract<HostMessage, { type: 'permission' }>[] = [];
  post(msg: HostMessage): void {
    this.messages.push(msg);
    if (msg.type === 'permission') this.permissions.push(msg);
  }
}

async function until(what: string, pred: () => boolean, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !pred(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a window reloaded mid-turn shows the running turn once, is asked its approval again, and streams the rest', { skip: noServer, timeout: 90_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'op-reattach-'));
  const ws = join(work, 'ws');
  mkdirSync(ws);
  const script = join(work, 'script.json');
  writeFileSync(script, JSON.stringify([
    { text: 'Hello first.' },
    { text: 'Writing the notes now.', tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'n\n' } }] },
    { text: 'Notes saved after the reload.' },
  ]));
  const model = `scripted:${script}`;
  const kept = await attachOrStart(server, ['serve'], {
    cwd: ws, env: { ...process.env, OPENPROGRAM_HOME: join(work, 'home') } as Record<string, string>,
    dir: join(work, 'storage'), fingerprint: 'f',
  });
  try {
    const memento = new Memento();
    // the first window: its turn waits for an approval nobody gives
    const first = await connectAgent(kept.port, kept.token, ws, model);
    const before = new ChatController(first.agent, memento as never);
    const page1 = new Page();
    before.attach(page1);
    before.setSettings({ model, models: [], permissionMode: 'ask' });
    await before.send('say hello'); // the session has a turn before the running one
    const sent = before.send('write the notes').catch(() => undefined);
    await until('the approval in the first window', () => page1.permissions.length === 1);
    const sessionId = before.state.sessionId;
    assert.ok(sessionId);
    assert.equal(memento.get('openprogram.sessionId') ?? sessionId, sessionId);
    await first.stop(); // the window reloads
    void sent;
    assert.equal(existsSync(join(ws, 'notes.txt')), false);

    // the reloaded window: the same workspace state, a new connection
    const second = await connectAgent(kept.port, kept.token, ws, model);
    const after = new ChatController(second.agent, memento as never);
    const page2 = new Page();
    after.attach(page2);
    after.setSettings({ model, models: [], permissionMode: 'ask' });
    // the extension hears "running" twice as the server starts: two loads at once
    await Promise.all([after.loadSession(sessionId), after.loadSession(sessionId)]);
    const asked = page2.messages.filter((m) => m.type === 'event' && m.event.type === 'permission.requested').length;
    assert.equal(asked, 1, 'the old window was not asked again once it had shut down');
    await until('the approval asked again', () => page2.permissions.length === 1);
    // a later redraw of the session (another load) keeps the open approval live on its card
    await after.loadSession(sessionId);
    const live = after.state.items.filter((i) => i.kind === 'tool');
    assert.equal(live.length, 1);
    assert.ok(live[0].kind === 'tool' && live[0].permission && !live[0].permission.withdrawn && live[0].permission.requestId === page2.permissions[0].requestId,
      'the card still answers the open approval');
    const card = after.state.items.filter((i) => i.kind === 'tool');
    assert.equal(card.length, 1, 'one card for the call');
    assert.equal(after.state.busy, true, 'the re-attached turn runs here');
    // steering reaches the re-attached turn (it was not sent from this window)
    await after.send('and mind the tabs');
    assert.ok(page2.messages.some((m) => m.type === 'interjection' && m.text === 'and mind the tabs'));
    await after.onPageMessage({ type: 'permissionReply', requestId: page2.permissions[0].requestId,
      optionId: page2.permissions[0].options.find((o) => o.kind === 'allow_once')!.optionId });
    await until('the turn to end', () => !after.state.busy);
    assert.equal(readFileSync(join(ws, 'notes.txt'), 'utf8'), 'n\n');
    const shown = after.state.items.map((i) => (i.kind === 'message' ? `${i.role}: ${i.text}` : i.kind));
    assert.ok(shown.includes('interjection'));
    assert.deepEqual(shown.filter((t) => t !== 'checkpoint' && t !== 'interjection'), ['user: say hello', 'assistant: Hello first.', 'user: write the notes', 'assistant: Writing the notes now.', 'tool', 'assistant: Notes saved after the reload.']);
    await second.stop();
  } finally {
    await endKept(kept.pid);
    rmSync(work, { recursive: true, force: true });
  }
});
