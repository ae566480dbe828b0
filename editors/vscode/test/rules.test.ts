// The approval rules quick pick: rows say what a rule covers, its scope and origin; revoke calls the server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RuleInfo } from '../src/protocol';
import { listRules, removeSettingsRule, revokeRule, ruleItems, Target } from '../src/rules';

const rule = (over: Partial<RuleInfo> = {}): RuleInfo => ({
  id: 'r1', decision: 'allow', kind: 'command', tool: 'run_command', value: 'npm test', scope: 'session',
  sessionId: 's1', origin: 'prompt', createdAt: '2026-12-01T10:00:00Z', toolCallId: 'call_x',
  description: 'Run `npm test`', revocable: true, ...over,
});

test('rows name the coverage, the scope and where the rule came from', () => {
  const [a, b] = ruleItems([rule(), rule({ id: 'settings-1', origin: 'settings', scope: 'workspace', decision: 'deny', description: 'rm * (pattern from settings)', revocable: false })], 's1');
  assert.match(a.label, /Allow: Run `npm test`/);
  assert.equal(a.description, 'this session');
  assert.equal(a.detail, 'chosen in a prompt on 2026-12-01T10:00:00Z');
  // no raw ids in what the user reads: another session by its title, else as another session
  const titled = ruleItems([rule()], 's0mx9', (id) => (id === 's1' ? 'Fix the parser' : undefined))[0];
  assert.equal(titled.description, 'the session “Fix the parser”');
  assert.equal(ruleItems([rule()], 's0mx9')[0].description, 'another session');
  assert.equal(ruleItems([rule()], 's1')[0].description, 'this session');
  assert.match(b.label, /Reject: rm \*/);
  assert.equal(b.description, 'this workspace');
  assert.match(b.detail, /from the openprogram.rules setting/);
});

test('listing passes the session; revoking names the rule', async () => {
  const sent: [string, unknown][] = [];
  const port = {
    request<T>(method: string, params: unknown): Promise<T> {
      sent.push([method, params]);
      const answer = method === 'openprogram/rules' ? { rules: [rule()] } : { revoked: rule() };
      return Promise.resolve(answer as T);
    },
  };
  assert.equal((await listRules(port, 's1')).length, 1);
  assert.equal((await revokeRule(port, 'r1')).id, 'r1');
  await listRules(port, null);
  await revokeRule(port, 'r2', '/ws/b');
  assert.deepEqual(sent, [
    ['openprogram/rules', { sessionId: 's1' }],
    ['openprogram/revokeRule', { ruleId: 'r1' }],
    ['openprogram/rules', {}],
    ['openprogram/revokeRule', { ruleId: 'r2', workspace: '/ws/b' }],
  ]);
});

test('rows name the folder when rules come from several', () => {
  const [a, b] = ruleItems([rule({ workspace: '/ws/a' }), rule({ id: 'r2', workspace: '/ws/b' })], 's1');
  assert.equal(a.description, 'this session · a');
  assert.equal(b.description, 'this session · b');
  assert.equal(ruleItems([rule({ workspace: '/ws/a' })], 's1')[0].description, 'this session');
});

test('a settings rule is removed from exactly the levels that hold it', async () => {
  const mine = { tool: 'run_command', pattern: 'rm *', decision: 'deny' };
  const other = { tool: 'run_command', pattern: 'npm test*', decision: 'allow' };
  const updates: [string, unknown, number][] = [];
  const store = (levels: Record<number, unknown>, writes = true) => ({
    inspect: () => ({ globalValue: levels[Target.Global], workspaceValue: levels[Target.Workspace] }),
    update: (key: string, value: unknown, target: number) => {
      updates.push([key, value, target]);
      if (writes) levels[target] = value;
      return Promise.resolve();
    },
  });
  const settingsRule = rule({ id: 'settings-2', origin: 'settings', kind: 'pattern', decision: 'deny', value: 'rm *', revocable: false });
  assert.deepEqual(await removeSettingsRule(store({ [Target.Global]: [other, mine], [Target.Workspace]: [other] }), settingsRule), [Target.Global]);
  assert.deepEqual(updates, [['rules', [other], Target.Global]]);
  updates.length = 0;
  // the last entry leaves the setting unset; a rule no level holds changes nothing
  const only = store({ [Target.Global]: [mine] });
  assert.deepEqual(await removeSettingsRule(only, settingsRule), [Target.Global]);
  assert.deepEqual(updates, [['rules', undefined, Target.Global]]);
  assert.deepEqual(await removeSettingsRule(store({ [Target.Global]: [mine] }), rule({ origin: 'settings', value: 'ls' })), []);
  // a write that does not take (a remote window writing elsewhere) is not reported as done
  assert.deepEqual(await removeSettingsRule(store({ [Target.Global]: [mine] }, false), settingsRule), []);
});
