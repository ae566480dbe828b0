// The kept server: one `serve --tcp --keep-turns` per workspace, started detached, found again by
// a reloaded window through its record; a real openprogram-lsp where the .venv has one.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { attachOrStart, endKept, fingerprint, keepable, keptArgs, keptDir, pidAlive, readRecord, withLock } from '../src/kept';
import { withoutRunningTurn } from '../src/chat/reattach';
import type { EventParams, HistoryResult } from '../src/protocol';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const server = process.env.OPENPROGRAM_LSP ?? join(repo, '.venv', 'bin', 'openprogram-lsp');
const noServer = !existsSync(server) && !process.env.CI && 'no .venv/bin/openprogram-lsp';

test('only the plain serve in a workspace is kept; its arguments add the loopback transport', () => {
  assert.equal(keepable(['serve'], '/ws-storage'), true);
  assert.equal(keepable(['serve', '--tcp', '7021'], '/ws-storage'), false);
  assert.equal(keepable(['acp'], '/ws-storage'), false);
  assert.equal(keepable(['serve'], undefined), false); // no workspace: the stdio child
  // every window of a folder finds the same record (in the global storage, by folder)
  assert.equal(keptDir('/g', '/w/a'), keptDir('/g', '/w/a/'));
  assert.notEqual(keptDir('/g', '/w/a'), keptDir('/g', '/w/b'));
  assert.equal(keptDir('/g', undefined), undefined);
  assert.deepEqual(keptArgs(['serve', '--log-file', 'x'], '/t'), ['serve', '--log-file', 'x', '--tcp', '0', '--token-file', '/t', '--idle-exit', '60', '--keep-turns', '120']);
  const a = fingerprint({ command: '/bin/op', args: ['serve'], cwd: '/w', home: '/h', version: '1' });
  assert.equal(a, fingerprint({ command: '/bin/op', args: ['serve'], cwd: '/w', home: '/h', version: '1' }));
  assert.notEqual(a, fingerprint({ command: '/bin/op', args: ['serve'], cwd: '/w', home: '/h', version: '2' }));
});

test('a record that is not one is none; a lock is held by one start at a time', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kept-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'bad.json'), '{"pid": "1"}');
  assert.equal(readRecord(join(dir, 'bad.json')), null);
  assert.equal(readRecord(join(dir, 'none.json')), null);
  const order: string[] = [];
  const one = withLock(join(dir, 'l'), async () => {
    order.push('a');
    await new Promise((r) => setTimeout(r, 150));
    order.push('a-end');
  });
  await new Promise((r) => setTimeout(r, 20));
  const two = withLock(join(dir, 'l'), async () => {
    order.push('b');
  });
  await Promise.all([one, two]);
  assert.deepEqual(order, ['a', 'a-end', 'b']);
});

test('the history of a re-attached session leaves the running turn to its replay', () => {
  const h = { sessionId: 's', headId: 'u2_reply', hasMore: false, nodes: [
    { id: 'u1', role: 'user' }, { id: 'u1_reply', role: 'assistant' }, { id: 'u2', role: 'user' }, { id: 'u2_reply', role: 'assistant' },
  ] } as unknown as HistoryResult;
  const started: EventParams = { type: 'turn.started', sessionId: 's', turnId: 'u2_reply', replayed: true,
    data: { userNodeId: 'u2', assistantNodeId: 'u2_reply', predecessor: 'u1_reply' } };
  const shown = withoutRunningTurn(h, [started], 'u2_reply');
  assert.deepEqual(shown.nodes.map((n) => n.id), ['u1', 'u1_reply']);
  assert.equal(shown.headId, 'u1_reply');
  // nothing replayed (the turn ended meanwhile): the history as it is
  assert.deepEqual(withoutRunningTurn(h, [{ ...started, replayed: undefined }], undefined).nodes.length, 4);
});

test('a reloaded window attaches to the server the first one started; Restart ends it', { skip: noServer, timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kept-'));
  const ws = mkdtempSync(join(tmpdir(), 'kept-ws-'));
  t.after(() => { for (const d of [dir, ws]) rmSync(d, { recursive: true, force: true }); });
  const env = { ...process.env, OPENPROGRAM_HOME: join(dir, 'home') } as Record<string, string>;
  const options = { cwd: ws, env, dir: join(dir, 'storage'), fingerprint: 'f1' };
  const first = await attachOrStart(server, ['serve'], options);
  try {
    assert.equal(first.started, true);
    assert.equal(statSync(join(options.dir, 'server.json')).mode & 0o077, 0, 'the record is private');
    assert.equal(statSync(join(options.dir, 'server.token')).mode & 0o077, 0, 'the token is private');
    // the window goes, the server stays; the next window finds it
    const again = await attachOrStart(server, ['serve'], options);
    assert.equal(again.started, false);
    assert.equal(again.pid, first.pid);
    assert.equal(again.port, first.port);
    // it speaks LSP on that port to whoever knows the token
    const answer = await new Promise<string>((res, rej) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {}, initializationOptions: { token: again.token } } });
      const sock = net.connect({ host: '127.0.0.1', port: again.port }, () => sock.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`));
      let got = '';
      sock.on('data', (d) => {
        got += String(d);
        if (got.includes('"result"')) {
          sock.destroy();
          res(got);
        }
      });
      sock.on('error', rej);
    });
    assert.match(answer, /"serverInfo"/);
    // another start (a setting changed while no window was open) is another server
    const other = await attachOrStart(server, ['serve'], { ...options, fingerprint: 'f2' });
    assert.notEqual(other.pid, first.pid);
    await endKept(other.pid);
    assert.equal(pidAlive(other.pid), false);
    assert.match(readFileSync(join(options.dir, 'server.log'), 'utf8'), /listening on 127\.0\.0\.1:/);
  } finally {
    await endKept(first.pid);
  }
  assert.equal(pidAlive(first.pid), false);
});
