// Unit tests for the server process: a clear error for a missing executable, and group kill.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { exitDetail, spawnServer } from '../src/process';

function alive(pid: number): boolean {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

test('a missing executable is one line naming the setting', async () => {
  await assert.rejects(spawnServer('/nonexistent/openprogram-lsp', ['serve'], {}), /cannot start \/nonexistent\/openprogram-lsp: no such executable \(set openprogram.server.command\)/);
});

test('killGroup ends the server and what it started in its group', async () => {
  const proc = await spawnServer('/bin/sh', ['-c', 'sleep 30 & echo $!; wait'], {});
  const grandchild = await new Promise<number>((resolve) => proc.child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  assert.ok(alive(grandchild));
  const exited = new Promise<string>((resolve) => proc.onExit((code, signal) => resolve(exitDetail(code, signal))));
  proc.killGroup();
  assert.equal(await exited, 'the server was killed by SIGKILL');
  for (let i = 0; i < 200 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(alive(grandchild), false, 'the grandchild died with the group');
});
