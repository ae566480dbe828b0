import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readAttachment, runFilePath, stateHome } from '../src/connect';

test('a port names the run file under the state home', () => {
  assert.equal(runFilePath('7021', '/h'), path.join('/h', 'run', '7021.json'));
  assert.equal(runFilePath('/x/7021.json', '/h'), '/x/7021.json');
  assert.equal(stateHome('', { OPENPROGRAM_HOME: '/op' }), '/op');
  assert.equal(stateHome('', { HOME: '/u' }), path.join('/u', '.local', 'share', 'openprogram-lsp'));
});

test('the run file gives port and token; a bad one is a one-line error', (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'op-connect-'));
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.mkdirSync(path.join(home, 'run'));
  fs.writeFileSync(path.join(home, 'run', '7021.json'), JSON.stringify({ port: 7021, pid: 1, token: 'tok' }));
  assert.deepEqual(readAttachment('7021', home), { port: 7021, token: 'tok' });
  assert.throws(() => readAttachment('7022', home), /cannot read the server's run file/);
  fs.writeFileSync(path.join(home, 'run', '7023.json'), '{"port": 1}');
  assert.throws(() => readAttachment('7023', home), /not an openprogram-lsp run file/);
});
