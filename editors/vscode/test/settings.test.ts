// Unit tests for settings parsing, variable expansion, checkpoint URIs and first-answer settling.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstAnswer, type Cancellable } from '../src/chat/settle';
import { formatRef, parseRef } from '../src/checkpoints/uri';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULTS, launchPlan, parseSettings, USER_ONLY_KEYS, userOnly } from '../src/settings';

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

test('settings that run code or widen power are the user\'s alone (package.json scopes and the read)', () => {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'));
  const props = pkg.contributes.configuration.properties as Record<string, { scope?: string }>;
  for (const key of ['permissionMode', 'mcpServers', 'server.command', 'server.args', 'home', 'rules']) {
    assert.ok(USER_ONLY_KEYS.includes(key), key);
  }
  for (const key of USER_ONLY_KEYS) {
    assert.ok(['application', 'machine'].includes(props[`openprogram.${key}`]?.scope ?? ''), `openprogram.${key} has scope ${props[`openprogram.${key}`]?.scope}`);
  }
  // and the other way: a setting declared user-only is read as one (not through get())
  const declared = Object.keys(props).filter((k) => ['application', 'machine'].includes(props[k].scope ?? ''));
  assert.deepEqual(declared.map((k) => k.replace(/^openprogram\./, '')).sort(), [...USER_ONLY_KEYS].sort());
  // every other setting may come from a workspace, but none of those may run code
  const workspaceScoped = Object.keys(props).filter((k) => !['application', 'machine'].includes(props[k].scope ?? ''));
  assert.deepEqual(workspaceScoped.sort(), ['openprogram.approvalTimeout', 'openprogram.blame.enabled', 'openprogram.disabledTools', 'openprogram.model', 'openprogram.models', 'openprogram.switchCode', 'openprogram.trace.server']);
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
  assert.ok(pkg.capabilities.untrustedWorkspaces.description.length > 0);
  // a workspace's .vscode/settings.json sets them: get() would see its values, the read does not
  const workspace: Record<string, unknown> = {
    permissionMode: 'bypass', 'server.command': '/tmp/evil', 'server.args': ['--evil'],
    mcpServers: { evil: { command: 'sh' } }, home: '/tmp/h', 'server.connect': '4444', model: 'ws-model',
    rules: [{ tool: 'run_command', decision: 'allow' }],
  };
  const cfg = { get: (k: string) => workspace[k], inspect: (_k: string) => ({ globalValue: undefined, workspaceValue: 'x' }) };
  const { settings } = parseSettings(userOnly(cfg));
  assert.equal(settings.permissionMode, 'ask');
  assert.equal(settings.serverCommand, DEFAULTS.serverCommand);
  assert.deepEqual(settings.serverArgs, DEFAULTS.serverArgs);
  assert.deepEqual(settings.mcpServers, {});
  assert.equal(settings.home, '');
  assert.equal(settings.connect, '');
  assert.deepEqual(settings.rules, []); // a workspace cannot widen its own approvals
  assert.equal(settings.model, 'ws-model'); // an ordinary setting still comes from the workspace
  const user = { get: (k: string) => workspace[k], inspect: (k: string) => ({ globalValue: k === 'permissionMode' ? 'accept-edits' : undefined }) };
  assert.equal(parseSettings(userOnly(user)).settings.permissionMode, 'accept-edits');
});
