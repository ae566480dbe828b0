// Unit tests for the status bar item and badge: server state, running turn, waiting cards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HostMessage } from '../src/webview/messages';
import { initialState, reduce } from '../src/webview/state';
import { statusView } from '../src/status';

const permission = (requestId: string, toolCallId: string): HostMessage => ({
  type: 'permission',
  requestId,
  turnId: 't1',
  toolCall: { toolCallId, name: 'write_file', kind: 'edit', title: `Write ${toolCallId}`, input: {} },
  options: [{ optionId: 'o1', name: 'Allow once', kind: 'allow_once' }],
});

test('the item counts approvals and questions waiting, and stops counting what was answered', () => {
  let s = [
    { type: 'reset', sessionId: 's1' } as HostMessage,
    { type: 'userSent', text: 'go', predecessor: null } as HostMessage,
    permission('p1', 'c1'),
    permission('p2', 'c2'),
    { type: 'question', requestId: 'q1', question: 'Which?', options: ['a'], allowFreeText: false } as HostMessage,
  ].reduce(reduce, initialState());
  let v = statusView('running', undefined, s);
  assert.equal(v.waiting, 3);
  assert.equal(v.text, '$(loading~spin) OpenProgram $(bell-dot) 3');
  assert.match(v.tooltip, /3 cards waiting/);
  assert.equal(v.alert, true);
  s = reduce(s, { type: 'permissionSettled', requestId: 'p1', choice: 'o1' });
  s = reduce(s, { type: 'questionSettled', requestId: 'q1', answer: 'a' });
  s = reduce(s, { type: 'event', event: { type: 'permission.withdrawn', sessionId: 's1', turnId: 't1', data: { toolCallId: 'c2', reason: 'timeout' } } });
  v = statusView('running', undefined, s);
  assert.equal(v.waiting, 0);
  assert.equal(v.text, '$(loading~spin) OpenProgram');
});

test('a stopped server says why and that a click restarts it', () => {
  const v = statusView('stopped', 'the server was killed by SIGKILL', initialState());
  assert.equal(v.text, '$(error) OpenProgram');
  assert.match(v.tooltip, /killed by SIGKILL.*restart/);
  assert.equal(v.alert, true);
  assert.equal(statusView('running', undefined, initialState()).text, '$(hubot) OpenProgram');
});
