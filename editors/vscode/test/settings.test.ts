// Unit tests for settings parsing, variable expansion, checkpoint URIs and first-answer settling.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstAnswer, type Cancellable } from '../src/chat/settle';
import { formatRef, parseRef } from '../src/checkpoints/uri';
import { DEFAULTS, launchPlan, parseSettings } from '../src/settings';

test('defaults apply; bad values fall back and are reported', () => {
  assert.deepEqual(parseSettings(() => undefined), { settings: DEFAULTS, problems: [] });
  const { settings, problems } = parseSettings((k) => ({ permissionMode: 'sometimes', approvalTimeout: -1, 'server.args': 'serve' })[k]);
  assert.equal(settings.permissionMode, 'ask');
  assert.equal(settings.approvalTimeout, 300);
  assert.deepEqual(settings.serverArgs, ['serve']);
  assert.equal(problems.length, 3);
});

test('the launch plan expands variables and passes the model and mode', () => {
  const { settings } = parseSettings((k) => ({
    'server.command': '${workspaceFolder}/.venv/bin/openprogram-lsp',
    model: 'scripted:${env:SCRIPT}',
    permissionMode: 'accept-edits',
    home: '~/state',
  })[k]);
  const plan = launchPlan(settings, '/ws', { SCRIPT: '/tmp/s.json', HOME: '/home/u' });
  assert.equal(plan.command, '/ws/.venv/bin/openprogram-lsp');
  assert.deepEqual(plan.args, ['serve']);
  assert.equal(plan.cwd, '/ws');
  assert.equal(plan.env.OPENPROGRAM_MODEL, 'scripted:/tmp/s.json');
  assert.equal(plan.env.OPENPROGRAM_HOME, '/home/u/state');
  assert.deepEqual(plan.initializationOptions, {
    model: 'scripted:/tmp/s.json',
    permissionMode: 'accept-edits',
    approvalTimeout: 300,
    blame: { enabled: true },
    client: 'vscode',
  });
});

test('MCP servers and disabled tools reach the server as initializationOptions', () => {
  const servers = { notes: { command: 'python', args: ['notes.py'] }, docs: { type: 'http', url: 'http://127.0.0.1:1/mcp' } };
  const { settings, problems } = parseSettings((k) => ({ mcpServers: servers, disabledTools: ['mcp__notes__*'] })[k]);
  assert.deepEqual(problems, []);
  const plan = launchPlan(settings, '/ws', {});
  assert.deepEqual(plan.initializationOptions.mcpServers, servers);
  assert.deepEqual(plan.initializationOptions.disabledTools, ['mcp__notes__*']);
  const bad = parseSettings((k) => ({ mcpServers: ['x'], disabledTools: 'all' })[k]);
  assert.deepEqual(bad.settings.mcpServers, {});
  assert.equal(bad.problems.length, 2);
});

test('approval rules the user wrote reach the server; malformed ones are refused whole', () => {
  const rules = [{ tool: 'run_command', pattern: 'npm test*', decision: 'allow' }, { tool: 'write_file', decision: 'deny' }];
  const { settings, problems } = parseSettings((k) => ({ rules })[k]);
  assert.deepEqual(problems, []);
  assert.deepEqual(launchPlan(settings, '/ws', {}).initializationOptions.rules, rules);
  assert.equal(launchPlan(parseSettings(() => undefined).settings, '/ws', {}).initializationOptions.rules, undefined);
  for (const bad of [[{ tool: 'x', decision: 'maybe' }], [{ decision: 'allow' }], 'all', [{ tool: 'x', decision: 'allow', pattern: 5 }]]) {
    const r = parseSettings((k) => ({ rules: bad })[k]);
    assert.deepEqual(r.settings.rules, []);
    assert.match(r.problems.join(), /openprogram\.rules/);
  }
});

test('checkpoint URIs round-trip', () => {
  const ref = { checkpointId: 'abc', path: 'dir/a b.txt', side: 'before' as const };
  const { path, query } = formatRef(ref);
  assert.deepEqual(parseRef(path, query), ref);
  assert.equal(parseRef('/x', 'cp=1&side=middle'), undefined);
});

class Token implements Cancellable {
  isCancellationRequested = false;
  private listeners: (() => unknown)[] = [];
  onCancellationRequested(l: () => unknown) {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  }
  cancel(): void {
    this.isCancellationRequested = true;
    for (const l of this.listeners) l();
  }
}

test('the first answer wins, later ones are ignored', async () => {
  const pending = new Map<string, (v: string | null) => void>();
  const token = new Token();
  const p = firstAnswer(pending, 'p1', token, () => new Promise((r) => setTimeout(() => r('native'), 5)));
  pending.get('p1')?.('card');
  assert.equal(await p, 'card');
  assert.equal(pending.size, 0);
});

test('a dismissed notification leaves the card answerable; cancellation settles with null', async () => {
  const pending = new Map<string, (v: string | null) => void>();
  const token = new Token();
  const p = firstAnswer(pending, 'p2', token, () => Promise.resolve(null));
  await new Promise((r) => setImmediate(r));
  assert.ok(pending.has('p2'));
  token.cancel();
  assert.equal(await p, null);
});

test('provider base URLs and key sources reach the server; a key or a bad URL does not', () => {
  const { settings, problems } = parseSettings((k) => ({
    'openai.baseUrl': 'http://127.0.0.1:11434/v1',
    'openai.apiKeyEnv': 'MY_OPENAI_KEY',
    'anthropic.apiKeyCommand': 'pass show ${env:WHO}/anthropic',
  })[k]);
  assert.deepEqual(problems, []);
  const plan = launchPlan(settings, '/ws', { WHO: 'me' });
  assert.deepEqual(plan.initializationOptions.providers, {
    openai: { baseUrl: 'http://127.0.0.1:11434/v1', apiKeyEnv: 'MY_OPENAI_KEY' },
    anthropic: { apiKeyCommand: 'pass show me/anthropic' },
  });
  const bad = parseSettings((k) => ({ 'openai.baseUrl': 'file:///etc/passwd', 'openai.apiKeyEnv': 'sk-live-123456' })[k]);
  assert.equal(bad.problems.length, 2);
  assert.equal(launchPlan(bad.settings, '/ws', {}).initializationOptions.providers, undefined);
});
