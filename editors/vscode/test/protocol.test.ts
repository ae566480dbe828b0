// The method tables agree: protocol.ts against the server's table, the Lua plugin and the doc.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EventTypes, Requests, ServerNotifications, ServerRequests, allMethods } from '../src/protocol';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..', '..', '..'); // out/test → editors/vscode → repo
const METHOD = /openprogram\/[A-Za-z]+/g;

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();
const ours = sorted(allMethods());

interface Table {
  clientRequests: string[];
  serverRequests: string[];
  serverNotifications: string[];
  eventTypes: string[];
}

/** The server's method table by direction, or undefined when the server has none yet. */
function pythonTable(): Table | undefined {
  const python = join(repo, '.venv', 'bin', 'python');
  if (!existsSync(python)) return undefined;
  const script = [
    'import json, importlib',
    'try:',
    '    m = importlib.import_module("openprogram_lsp.lsp.methods")',
    'except ImportError:',
    '    print("null"); raise SystemExit',
    'print(json.dumps(m.as_table()))',
  ].join('\n');
  const parsed = JSON.parse(execFileSync(python, ['-c', script], { encoding: 'utf8' })) as Table | null;
  return parsed ?? undefined;
}

test('request and notification names are unique and namespaced', () => {
  assert.equal(ours.length, allMethods().length);
  for (const m of ours) assert.match(m, /^openprogram\/[a-z][A-Za-z]+$/);
  assert.equal(Requests.checkpointDiff, 'openprogram/checkpointDiff');
  assert.equal(ServerRequests.requestPermission, 'openprogram/requestPermission');
  assert.equal(ServerNotifications.event, 'openprogram/event');
});

test('protocol.ts matches the server method table (openprogram_lsp.lsp.methods)', (t) => {
  const py = pythonTable();
  if (!py) {
    t.skip('openprogram_lsp.lsp.methods is not importable yet');
    return;
  }
  assert.deepEqual(sorted(Object.values(Requests)), sorted(py.clientRequests));
  assert.deepEqual(sorted(Object.values(ServerRequests)), sorted(py.serverRequests));
  assert.deepEqual(sorted(Object.values(ServerNotifications)), sorted(py.serverNotifications));
  assert.deepEqual(sorted(EventTypes), sorted(py.eventTypes));
});

test('protocol.ts matches the Neovim plugin protocol.lua', (t) => {
  const lua = join(repo, 'editors', 'nvim', 'lua', 'openprogram', 'protocol.lua');
  if (!existsSync(lua)) {
    t.skip('editors/nvim/lua/openprogram/protocol.lua is absent');
    return;
  }
  assert.deepEqual(ours, sorted(readFileSync(lua, 'utf8').match(METHOD) ?? []));
});

test('protocol.ts matches the protocol document, methods and event types', (t) => {
  const doc = [join(repo, 'docs', 'protocol.md'), '/work/shared/design/protocol-v1.md'].find(existsSync);
  if (!doc) {
    t.skip('no protocol document found');
    return;
  }
  const text = readFileSync(doc, 'utf8');
  // docs/protocol.md gives each method a heading; the design doc only names them in backticks.
  const headings = [...text.matchAll(/^#{2,3} `(openprogram\/[A-Za-z]+)`/gm)].map((m) => m[1]);
  const named = headings.length > 0 ? headings : [...text.matchAll(/`(openprogram\/[A-Za-z]+)`/g)].map((m) => m[1]);
  assert.deepEqual(ours, sorted(named));
  for (const type of EventTypes) {
    assert.ok(text.includes(`\`${type}\``), `${type} is documented in ${doc}`);
  }
});
