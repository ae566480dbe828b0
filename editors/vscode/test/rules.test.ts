// The approval rules quick pick: rows say what a rule covers, its scope and origin; revoke calls the server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RuleInfo } from '../src/protocol';
import { listRules, revokeRule, ruleItems } from '../src/rules';

const rule = (over: Partial<RuleInfo> = {}): RuleInfo => ({
  id: 'r1', decision: 'allow', kind: 'command', tool: 'run_command', value: 'npm test', scope: 'session',
  sessionId: 's1', origin: 'prompt', createdAt: '2026-12-01T10:00:00Z', toolCallId: 'call_x',
  description: 'Run `npm test`', revocable: true, ...over,
});

test('rows name the coverage, the scope and where the rule came from', () => {
  const [a, b] = ruleItems([rule(), rule({ id: 'settings-1', origin: 'settings', scope: 'workspace', decision: 'deny', description: 'rm * (pattern from settings)', revocable: false })]);
  assert.match(a.label, /Allow: Run `npm test`/);
  assert.equal(a.description, 'this session (s1)');
  assert.match(a.detail, /chosen in a prompt on 2026-12-01T10:00:00Z for call call_x/);
  assert.match(b.label, /Reject: rm \*/);
  assert.equal(b.description, 'this workspace');
  assert.match(b.detail, /from settings/);
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
  assert.deepEqual(sent, [['openprogram/rules', { sessionId: 's1' }], ['openprogram/revokeRule', { ruleId: 'r1' }], ['openprogram/rules', {}]]);
});
