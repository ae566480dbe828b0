// Unit tests for the chat state reducer: streaming, tool cards, approvals, questions, forks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EventParams, TurnResult } from '../src/protocol';
import type { HostMessage } from '../src/webview/messages';
import { initialState, reduce, type ChatState, type MessageItem, type ToolItem } from '../src/webview/state';

const S = 'sess1';

function run(msgs: HostMessage[], from: ChatState = initialState()): ChatState {
  return msgs.reduce(reduce, from);
}

function ev(type: string, data: Record<string, unknown> = {}, turnId = 't1', sessionId = S): HostMessage {
  const event: EventParams = { type, sessionId, turnId, data };
  return { type: 'event', event };
}

function result(extra: Partial<TurnResult> = {}): TurnResult {
  return {
    sessionId: S,
    userNodeId: 'u1',
    assistantNodeId: 'a1',
    headId: 'a1',
    status: 'done',
    text: 'Hello there',
    usage: { inputTokens: 1, outputTokens: 2 },
    checkpoint: null,
    ...extra,
  };
}

const messages = (s: ChatState): MessageItem[] => s.items.filter((i): i is MessageItem => i.kind === 'message');
const tools = (s: ChatState): ToolItem[] => s.items.filter((i): i is ToolItem => i.kind === 'tool');

test('text deltas stream into one assistant message, then the result names its nodes', () => {
  let s = run([
    { type: 'userSent', text: 'hi', predecessor: null },
    ev('turn.started'),
    ev('text.delta', { text: 'Hel' }),
    ev('text.delta', { text: 'lo there' }),
  ]);
  assert.equal(s.busy, true);
  assert.equal(s.sessionId, S, 'a new chat adopts the session of its first event');
  assert.deepEqual(messages(s).map((m) => [m.role, m.text, m.streaming]), [
    ['user', 'hi', false],
    ['assistant', 'Hello there', true],
  ]);
  s = reduce(s, { type: 'turnResult', result: result() });
  assert.equal(s.busy, false);
  assert.equal(s.headId, 'a1');
  assert.deepEqual(messages(s).map((m) => [m.nodeId, m.streaming]), [
    ['u1', false],
    ['a1', false],
  ]);
});

test('turn.finished and the request result are idempotent together', () => {
  const s = run([
    { type: 'userSent', text: 'hi', predecessor: null },
    ev('text.delta', { text: 'Hello there' }),
    ev('turn.finished', result() as unknown as Record<string, unknown>),
    { type: 'turnResult', result: result() },
  ]);
  assert.equal(messages(s).length, 2);
});

test('a result without deltas still shows the reply text', () => {
  const s = run([{ type: 'userSent', text: 'hi', predecessor: null }, { type: 'turnResult', result: result() }]);
  assert.deepEqual(messages(s).map((m) => m.text), ['hi', 'Hello there']);
});

test('events of other sessions are ignored', () => {
  const s = run([{ type: 'history', sessionId: S, headId: null, nodes: [] }, ev('text.delta', { text: 'x' }, 't9', 'other')]);
  assert.equal(s.items.length, 0);
});

test('a tool call becomes a card; permission prompt attaches to it and settles once', () => {
  let s = run([
    { type: 'userSent', text: 'write it', predecessor: null },
    ev('text.delta', { text: 'Writing.' }),
    ev('tool.started', { toolCallId: 'c1', name: 'write_file', kind: 'edit', title: 'Write a.txt', input: { path: 'a.txt' } }),
    {
      type: 'permission',
      requestId: 'p1',
      toolCall: { toolCallId: 'c1', name: 'write_file', kind: 'edit', title: 'Write a.txt', input: { path: 'a.txt' }, diff: { path: 'a.txt', oldText: '', newText: 'x\n' } },
      options: [
        { optionId: 'o1', name: 'Allow once', kind: 'allow_once' },
        { optionId: 'o2', name: 'Reject', kind: 'reject_once' },
      ],
    },
  ]);
  assert.equal(tools(s).length, 1);
  const card = tools(s)[0];
  assert.equal(card.status, 'in_progress');
  assert.equal(card.permission?.choice, undefined);
  assert.equal(card.diff?.newText, 'x\n');
  assert.equal(messages(s)[1].streaming, false, 'a tool card closes the streaming segment');
  s = run([
    { type: 'permissionSettled', requestId: 'p1', choice: 'o1' },
    { type: 'permissionSettled', requestId: 'p1', choice: null },
    ev('tool.finished', { toolCallId: 'c1', status: 'completed', output: 'wrote 2 bytes' }),
    ev('text.delta', { text: 'Done.' }),
  ], s);
  const done = tools(s)[0];
  assert.equal(done.permission?.choice, 'o1', 'the first answer wins');
  assert.equal(done.status, 'completed');
  assert.equal(done.output, 'wrote 2 bytes');
  assert.deepEqual(messages(s).map((m) => m.text), ['write it', 'Writing.', 'Done.']);
  s = reduce(s, { type: 'turnResult', result: result({ checkpoint: { id: 'cp1', createdAt: '', message: 'turn', files: [{ path: 'a.txt', status: 'added' }] } }) });
  assert.equal(messages(s)[2].nodeId, 'a1', 'the last segment carries the assistant node id');
  assert.ok(s.items.some((i) => i.kind === 'checkpoint' && i.checkpointId === 'cp1'));
});

test('a permission request before tool.started creates a pending card that tool.started reuses', () => {
  const s = run([
    { type: 'reset', sessionId: S },
    {
      type: 'permission',
      requestId: 'p1',
      toolCall: { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run ls', input: { command: 'ls' } },
      options: [{ optionId: 'o1', name: 'Allow once', kind: 'allow_once' }],
    },
    ev('tool.started', { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run ls', input: { command: 'ls' } }),
  ]);
  assert.equal(tools(s).length, 1);
  assert.equal(tools(s)[0].status, 'in_progress');
});

test('questions open and settle', () => {
  const s = run([
    { type: 'question', requestId: 'q1', question: 'Which?', options: ['a', 'b'], allowFreeText: true },
    { type: 'questionSettled', requestId: 'q1', answer: 'b' },
  ]);
  const q = s.items[0];
  assert.equal(q.kind, 'question');
  assert.equal(q.kind === 'question' && q.answer, 'b');
});

test('history renders tool calls before the reply and skips tool nodes', () => {
  const s = reduce(initialState(), {
    type: 'history',
    sessionId: S,
    headId: 'a1',
    nodes: [
      { id: 'u1', role: 'user', text: 'go', predecessor: null },
      { id: 'a1', role: 'assistant', text: 'ok', predecessor: 'u1', toolCalls: [{ id: 'c1', name: 'read_file', kind: 'read', status: 'completed' }] },
      { id: 'x1', role: 'tool', text: 'file body', predecessor: 'a1' },
    ],
  });
  assert.deepEqual(s.items.map((i) => i.kind), ['message', 'tool', 'message']);
  assert.equal(messages(s)[0].nodeId, 'u1');
});

test('a fork keeps the chain up to the fork point', () => {
  const base = reduce(initialState(), {
    type: 'history',
    sessionId: S,
    headId: 'a2',
    nodes: [
      { id: 'u1', role: 'user', text: 'one', predecessor: null },
      { id: 'a1', role: 'assistant', text: 'r1', predecessor: 'u1' },
      { id: 'u2', role: 'user', text: 'two', predecessor: 'a1' },
      { id: 'a2', role: 'assistant', text: 'r2', predecessor: 'u2' },
    ],
  });
  const forked = reduce(base, { type: 'userSent', text: 'other', predecessor: 'a2', forkFrom: 'a1' });
  assert.deepEqual(messages(forked).map((m) => m.text), ['one', 'r1', 'other']);
  assert.equal(messages(forked)[2].predecessor, 'a1');
  const fromRoot = reduce(base, { type: 'userSent', text: 'fresh', predecessor: 'a2', forkFrom: null });
  assert.deepEqual(messages(fromRoot).map((m) => m.text), ['fresh']);
});

test('errors and cancellation end the turn with a note', () => {
  const failed = run([{ type: 'userSent', text: 'x', predecessor: null }, { type: 'turnResult', result: result({ status: 'error', text: '', error: { message: 'boom' } }) }]);
  assert.equal(failed.busy, false);
  assert.ok(failed.items.some((i) => i.kind === 'note' && i.level === 'error' && i.text === 'boom'));
  const cancelled = run([{ type: 'userSent', text: 'x', predecessor: null }, { type: 'turnResult', result: result({ status: 'cancelled', text: '' }) }]);
  assert.ok(cancelled.items.some((i) => i.kind === 'note' && i.text === 'Cancelled.'));
  const rpc = run([{ type: 'userSent', text: 'x', predecessor: null }, { type: 'turnFailed', message: 'server gone' }]);
  assert.equal(rpc.busy, false);
});

test('the reducer never mutates its input', () => {
  const s0 = run([{ type: 'userSent', text: 'hi', predecessor: null }, ev('text.delta', { text: 'a' })]);
  const frozen = JSON.stringify(s0);
  reduce(s0, ev('text.delta', { text: 'b' }));
  reduce(s0, { type: 'turnResult', result: result() });
  assert.equal(JSON.stringify(s0), frozen);
});

test('history interleaves the text of each step with its tool calls; the last segment carries the node', () => {
  const s = reduce(initialState(), {
    type: 'history',
    sessionId: S,
    headId: 'a1',
    nodes: [
      { id: 'u1', role: 'user', text: 'go', predecessor: null },
      {
        id: 'a1', role: 'assistant', text: 'Writing.\n\nDone.', predecessor: 'u1',
        metadata: { steps: ['Writing.', 'Done.'] },
        toolCalls: [{ id: 'c1', name: 'write_file', kind: 'edit', status: 'completed', step: 0 }],
      },
    ],
  });
  assert.deepEqual(s.items.map((i) => (i.kind === 'message' ? `${i.role}:${i.text}:${i.nodeId}` : i.kind)), [
    'user:go:u1', 'assistant:Writing.:null', 'tool', 'assistant:Done.:a1',
  ]);
});

test('permission.withdrawn closes the open prompt on its card', () => {
  const s = run([
    { type: 'reset', sessionId: S },
    {
      type: 'permission',
      requestId: 'p1',
      toolCall: { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run ls', input: {} },
      options: [{ optionId: 'o1', name: 'Allow once', kind: 'allow_once' }],
    },
    ev('permission.withdrawn', { toolCallId: 'c1', reason: 'timeout' }),
  ]);
  assert.equal(tools(s)[0].permission?.choice, null);
});

test('a cancelled turn leaves no tool card running', () => {
  const s = run([
    { type: 'userSent', text: 'x', predecessor: null },
    ev('tool.started', { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run sleep', input: {} }),
    { type: 'turnResult', result: result({ status: 'cancelled', text: '' }) },
  ]);
  assert.equal(tools(s)[0].status, 'failed');
  assert.equal(tools(s)[0].output, 'Cancelled.');
});

test('subagent and branch messages show as notes', () => {
  const s = run([
    { type: 'reset', sessionId: S },
    ev('subagent.started', { agentId: 'a1', label: 'tests', headId: 'h' }),
    ev('subagent.ended', { agentId: 'a1', status: 'done' }),
    ev('branch.message_sent', { from: 'x', to: 'alt', message: 'hi' }),
  ]);
  assert.deepEqual(s.items.map((i) => (i.kind === 'note' ? i.text : i.kind)), [
    'Subagent “tests” started.', 'Subagent “a1” done.', 'Message sent to branch alt.',
  ]);
});
