// Unit tests for the chat state reducer: streaming, tool cards, approvals, questions, forks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EventParams, TurnResult } from '../src/protocol';
import type { HostMessage } from '../src/webview/messages';
import { initialState, orderSessions, reduce, withdrawnReason, type ChatState, type MessageItem, type NoteItem, type ToolItem } from '../src/webview/state';

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

/** A panel on session S whose own turn t1 has started. */
const ourTurn = (): HostMessage[] => [
  { type: 'reset', sessionId: S },
  { type: 'userSent', text: 'go', predecessor: null, clientTurnId: 'turn-1' },
  ev('turn.started', { clientTurnId: 'turn-1' }),
];

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
    ev('turn.started'),
    ev('text.delta', { text: 'Writing.' }),
    ev('tool.started', { toolCallId: 'c1', name: 'write_file', kind: 'edit', title: 'Write a.txt', input: { path: 'a.txt' } }),
    {
      type: 'permission',
      requestId: 'p1',
      turnId: 't1',
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
  s = reduce(s, { type: 'turnResult', result: result({ checkpoint: { id: 'cp1', createdAt: '', message: 'turn', kind: 'turn', files: [{ path: 'a.txt', status: 'added' }] } }) });
  assert.equal(messages(s)[2].nodeId, 'a1', 'the last segment carries the assistant node id');
  assert.ok(s.items.some((i) => i.kind === 'checkpoint' && i.checkpointId === 'cp1'));
});

test('a checkpoint committed after the turn result shows its card when checkpoint.created comes', () => {
  const files = [{ path: 'a.txt', status: 'added' as const }];
  let s = run([...ourTurn(), ev('text.delta', { text: 'Wrote it.' })]);
  s = reduce(s, { type: 'turnResult', result: result({ checkpoint: null, checkpointPending: 'cp9' }) });
  const card = s.items.find((i) => i.kind === 'checkpoint');
  assert.ok(card && card.kind === 'checkpoint' && card.checkpointId === 'cp9' && card.files === null, 'a hidden placeholder');
  s = reduce(s, ev('checkpoint.created', { id: 'other', createdAt: '', message: '', kind: 'turn', files }, 't2'));
  assert.equal(s.items.filter((i) => i.kind === 'checkpoint' && i.files !== null).length, 0, 'another checkpoint fills nothing');
  s = reduce(s, ev('checkpoint.created', { id: 'cp9', createdAt: '', message: 'turn', kind: 'turn', files }));
  const filled = s.items.filter((i) => i.kind === 'checkpoint');
  assert.equal(filled.length, 1);
  assert.deepEqual(filled[0].kind === 'checkpoint' && filled[0].files, files);
  s = reduce(s, ev('checkpoint.created', { id: 'cp9', createdAt: '', message: 'turn', kind: 'turn', files: [] }, 't1', 'elsewhere'));
  assert.deepEqual(s.items.filter((i) => i.kind === 'checkpoint').map((i) => i.kind === 'checkpoint' && i.files), [files], 'another session is not ours');
});

test('a permission request before tool.started creates a pending card that tool.started reuses', () => {
  const s = run([
    ...ourTurn(),
    {
      type: 'permission',
      requestId: 'p1',
      turnId: 't1',
      toolCall: { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run ls', input: { command: 'ls' } },
      options: [{ optionId: 'o1', name: 'Allow once', kind: 'allow_once' }],
    },
    ev('tool.started', { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run ls', input: { command: 'ls' } }),
  ]);
  assert.equal(tools(s).length, 1);
  assert.equal(tools(s)[0].status, 'in_progress');
});

test('a command card says whether it runs sandboxed', () => {
  const card = (sandboxed: boolean, sandboxNote?: string) => tools(run([
    { type: 'reset', sessionId: S },
    {
      type: 'permission',
      requestId: 'p1',
      turnId: 't1',
      toolCall: { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run ls', input: { command: 'ls' }, sandboxed, sandboxNote },
      options: [{ optionId: 'o1', name: 'Allow once', kind: 'allow_once' }],
    },
  ]))[0];
  assert.deepEqual(card(true).permission?.sandbox, { sandboxed: true, note: undefined });
  assert.deepEqual(card(false, 'not sandboxed: no bwrap').permission?.sandbox, { sandboxed: false, note: 'not sandboxed: no bwrap' });
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
      { createdAt: '', metadata: {}, id: 'u1', role: 'user', text: 'go' },
      { createdAt: '', metadata: {}, id: 'a1', role: 'assistant', text: 'ok', predecessor: 'u1', toolCalls: [{ id: 'c1', name: 'read_file', kind: 'read', status: 'completed', input: {}, step: 0 }] },
      { createdAt: '', metadata: {}, id: 'x1', role: 'tool', text: 'file body', predecessor: 'a1' },
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
      { createdAt: '', metadata: {}, id: 'u1', role: 'user', text: 'one' },
      { createdAt: '', metadata: {}, id: 'a1', role: 'assistant', text: 'r1', predecessor: 'u1' },
      { createdAt: '', metadata: {}, id: 'u2', role: 'user', text: 'two', predecessor: 'a1' },
      { createdAt: '', metadata: {}, id: 'a2', role: 'assistant', text: 'r2', predecessor: 'u2' },
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
      { createdAt: '', metadata: {}, id: 'u1', role: 'user', text: 'go' },
      {
        createdAt: '', id: 'a1', role: 'assistant', text: 'Writing.\n\nDone.', predecessor: 'u1',
        metadata: { steps: ['Writing.', 'Done.'] },
        toolCalls: [{ id: 'c1', name: 'write_file', kind: 'edit', status: 'completed', step: 0, input: {} }],
      },
    ],
  });
  assert.deepEqual(s.items.map((i) => (i.kind === 'message' ? `${i.role}:${i.text}:${i.nodeId}` : i.kind)), [
    'user:go:u1', 'assistant:Writing.:null', 'tool', 'assistant:Done.:a1',
  ]);
});

test('a cancelled turn leaves no tool card running', () => {
  const s = run([
    { type: 'userSent', text: 'x', predecessor: null },
    ev('turn.started'),
    ev('tool.started', { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run sleep', input: {} }),
    { type: 'turnResult', result: result({ status: 'cancelled', text: '' }) },
  ]);
  assert.equal(tools(s)[0].status, 'failed');
  assert.equal(tools(s)[0].output, 'Cancelled.');
});

test('a turn the server stopped (Restart Server) says interrupted, never that the user cancelled it', () => {
  const s = run([
    { type: 'userSent', text: 'x', predecessor: null },
    ev('turn.started'),
    ev('text.delta', { text: 'Running it.' }),
    ev('tool.started', { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run sleep', input: {} }),
    // the server's shutdown cut the turn: the wire status is cancelled, the text ends [interrupted]
    ev('turn.finished', result({ status: 'cancelled', text: 'Running it.\n\n[interrupted]' }) as unknown as Record<string, unknown>),
    { type: 'turnResult', result: result({ status: 'cancelled', text: 'Running it.\n\n[interrupted]',
      usage: { inputTokens: 900, outputTokens: 3, estimated: true } }) },
  ]);
  const reply = s.items.find((i) => i.kind === 'message' && i.role === 'assistant') as { usage?: unknown };
  assert.deepEqual(reply.usage, { inputTokens: 900, outputTokens: 3, estimated: true }, 'a cut turn\'s counts, marked estimated');
  assert.equal(tools(s)[0].status, 'failed');
  assert.equal(tools(s)[0].output, 'Interrupted: the server stopped while this ran.');
  assert.equal(tools(s)[0].cancelled, undefined);
  const notes = s.items.filter((i) => i.kind === 'note').map((i) => (i as { text: string }).text);
  assert.deepEqual(notes, ['This turn was interrupted: the server or the editor stopped before it finished. What it did until then is shown above.']);
  assert.ok(!s.items.some((i) => i.kind === 'message' && i.text.includes('[interrupted]')));
});

test('a subagent gets a section; a subagent ended unseen and branch messages show as notes', () => {
  const s = run([
    { type: 'reset', sessionId: S },
    ev('subagent.started', { agentId: 'a1', label: 'tests', headId: 'h' }),
    ev('subagent.ended', { agentId: 'a1', status: 'done' }),
    ev('subagent.ended', { agentId: 'a2', label: 'lint', status: 'error' }),
    ev('branch.message_sent', { from: 's1:u1', to: 's1:u7_reply', toLabel: 'alt', kind: 'message', message: 'hi' }),
    ev('branch.message_sent', { from: 's1:u7_reply', to: 's1:u1', kind: 'reply' }),
  ]);
  // the session and node ids stay off the screen
  assert.deepEqual(s.items.map((i) => (i.kind === 'note' ? i.text : i.kind === 'subagent' ? `${i.label}:${i.status}` : i.kind)), [
    'tests:done', 'Subagent “lint” error.', 'Message sent to alt.', 'A reply came back from another branch.',
  ]);
});

const permission = (requestId = 'p1', toolCallId = 'c1', turnId = 't1'): HostMessage => ({
  type: 'permission',
  requestId,
  turnId,
  toolCall: { toolCallId, name: 'run_command', kind: 'execute', title: 'Run ls', input: { command: 'ls' } },
  options: [
    { optionId: 'o1', name: 'Allow once', kind: 'allow_once' },
    { optionId: 'o2', name: 'Reject', kind: 'reject_once' },
  ],
});

test('permission.withdrawn marks the open prompt withdrawn with its reason', () => {
  const s = run([{ type: 'reset', sessionId: S }, permission(), ev('permission.withdrawn', { toolCallId: 'c1', reason: 'timeout' })]);
  const p = tools(s)[0].permission;
  assert.equal(p?.choice, null);
  assert.equal(p?.withdrawn, 'timeout');
  assert.equal(withdrawnReason('timeout'), 'no answer in time');
  assert.equal(withdrawnReason('cancelled'), 'the turn was cancelled');
  // A late answer from the card or the notification changes nothing.
  const late = reduce(s, { type: 'permissionSettled', requestId: 'p1', choice: 'o1' });
  assert.deepEqual(tools(late)[0].permission, p);
});

test('permission.withdrawn after the request was settled as cancelled still shows the reason', () => {
  // The notification fallback: $/cancelRequest settles the prompt (no answer) before the event.
  const s = run([
    { type: 'reset', sessionId: S },
    permission(),
    { type: 'permissionSettled', requestId: 'p1', choice: null },
    ev('permission.withdrawn', { toolCallId: 'c1', reason: 'cancelled' }),
  ]);
  assert.equal(tools(s)[0].permission?.withdrawn, 'cancelled');
  assert.equal(tools(s)[0].permission?.choice, null);
});

test('permission.withdrawn leaves an answered prompt, other cards and other sessions alone', () => {
  const s = run([
    { type: 'reset', sessionId: S },
    permission('p1', 'c1'),
    permission('p2', 'c2'),
    { type: 'permissionSettled', requestId: 'p1', choice: 'o1' },
    ev('permission.withdrawn', { toolCallId: 'c1', reason: 'timeout' }),
    ev('permission.withdrawn', { toolCallId: 'c2', reason: 'timeout' }, 't1', 'other'),
  ]);
  assert.equal(tools(s)[0].permission?.choice, 'o1');
  assert.equal(tools(s)[0].permission?.withdrawn, undefined);
  assert.equal(tools(s)[1].permission?.choice, undefined, 'an event of another session is ignored');
  const reasonless = reduce(s, ev('permission.withdrawn', { toolCallId: 'c2' }));
  assert.equal(tools(reasonless)[1].permission?.withdrawn, 'withdrawn');
});

test('a chat that starts a new session binds the panel at its own turn.started (clientTurnId)', () => {
  let s = run([
    { type: 'userSent', text: 'hi', predecessor: null, clientTurnId: 'turn-1' },
    // Another window's new session, and a turn started there, are not this panel's.
    ev('text.delta', { text: 'elsewhere' }, 'tx', 'other'),
    ev('turn.started', { clientTurnId: 'turn-9' }, 'tx', 'other'),
  ]);
  assert.equal(s.sessionId, null);
  assert.equal(messages(s).length, 1);
  s = run([ev('turn.started', { clientTurnId: 'turn-1' }, 't1', 'mine'), ev('text.delta', { text: 'Hi!' }, 't1', 'mine')], s);
  assert.equal(s.sessionId, 'mine', 'bound before the turn ends');
  assert.equal(s.busy, true);
  assert.deepEqual(messages(s).map((m) => m.text), ['hi', 'Hi!']);
  s = reduce(s, ev('text.delta', { text: 'x' }, 'tx', 'other'));
  assert.equal(messages(s)[1].text, 'Hi!');
  s = reduce(s, { type: 'turnResult', result: result({ sessionId: 'mine', text: 'Hi!' }), clientTurnId: 'turn-1' });
  assert.equal(s.clientTurnId, null);
  assert.equal(s.busy, false);
});

test('an unechoed turn.started does not bind the panel; the result does; an idle panel binds nothing', () => {
  let s = run([{ type: 'userSent', text: 'hi', predecessor: null, clientTurnId: 'turn-1' }, ev('turn.started', {}, 't1', 'elsewhere')]);
  assert.equal(s.sessionId, null, 'a turn started without our id (a follow-up in another session) is not ours');
  s = reduce(s, { type: 'turnResult', result: result({ sessionId: 'mine' }), clientTurnId: 'turn-1' });
  assert.equal(s.sessionId, 'mine');
  assert.deepEqual(messages(s).map((m) => m.text), ['hi', 'Hello there']);
  const idle = reduce(initialState(), ev('turn.started', { clientTurnId: 'turn-1' }, 't1', 'mine'));
  assert.equal(idle.sessionId, null);
});

test('after New session during a turn, that turn\'s result does not rebind the panel', () => {
  const s = run([
    { type: 'userSent', text: 'hi', predecessor: null, clientTurnId: 'turn-1' },
    { type: 'reset', sessionId: null },
    { type: 'turnResult', result: result({ status: 'cancelled', text: '' }), clientTurnId: 'turn-1' },
  ]);
  assert.equal(s.sessionId, null);
  assert.equal(s.items.length, 0);
});

test('turn warnings show once as warning notes, from turn.finished and the result', () => {
  const r = result({ warnings: ['checkpoint failed: disk full', 'rules file unreadable'] });
  const s = run([
    { type: 'userSent', text: 'hi', predecessor: null },
    ev('turn.started'),
    ev('turn.finished', r as unknown as Record<string, unknown>),
    { type: 'turnResult', result: r },
  ]);
  const notes = s.items.filter((i): i is NoteItem => i.kind === 'note');
  assert.deepEqual(notes.map((n) => [n.level, n.text]), [
    ['warning', 'checkpoint failed: disk full'],
    ['warning', 'rules file unreadable'],
  ]);
  const none = run([{ type: 'userSent', text: 'hi', predecessor: null }, { type: 'turnResult', result: result({ warnings: [] }) }]);
  assert.ok(!none.items.some((i) => i.kind === 'note'));
});

const shape = (s: ChatState): string[] =>
  s.items.map((i) => {
    switch (i.kind) {
      case 'message': return `${i.role}:${i.text}`;
      case 'interjection': return `${i.mode}:${i.text}`;
      case 'tool': return `tool:${i.toolCallId}`;
      default: return i.kind;
    }
  });

test('history places steering and follow-ups before the step that first saw them', () => {
  const s = reduce(initialState(), {
    type: 'history',
    sessionId: S,
    headId: 'a1',
    nodes: [
      { createdAt: '', metadata: {}, id: 'u1', role: 'user', text: 'go' },
      {
        createdAt: '', id: 'a1', role: 'assistant', text: 'Listing.\n\nUsing tabs.\n\nAll done.', predecessor: 'u1',
        metadata: {
          steps: ['Listing.', 'Using tabs.', 'All done.'],
          interjections: [
            { beforeStep: 1, kind: 'steer', text: 'use tabs' },
            { beforeStep: 2, kind: 'follow_up', text: 'tests pass' },
            { beforeStep: 3, kind: 'steer', text: 'stop' },
          ],
        },
        toolCalls: [
          { id: 'c1', name: 'run_command', kind: 'execute', status: 'completed', step: 0, input: {} },
          { id: 'c2', name: 'write_file', kind: 'edit', status: 'completed', step: 1, input: {} },
        ],
      },
      { createdAt: '', metadata: {}, id: 'u2', role: 'user', text: 'next', predecessor: 'a1' },
    ],
  });
  assert.deepEqual(shape(s), [
    'user:go', 'assistant:Listing.', 'tool:c1', 'steer:use tabs', 'assistant:Using tabs.', 'tool:c2',
    'follow_up:tests pass', 'assistant:All done.', 'steer:stop', 'user:next',
  ]);
  assert.equal(messages(s).find((m) => m.text === 'All done.')?.nodeId, 'a1', 'the last text segment still carries the node');
});

test('interjections without steps, or malformed, still render in order at the end of the reply', () => {
  const s = reduce(initialState(), {
    type: 'history',
    sessionId: S,
    headId: 'a1',
    nodes: [
      { createdAt: '', metadata: {}, id: 'u1', role: 'user', text: 'go' },
      {
        createdAt: '', id: 'a1', role: 'assistant', text: 'ok', predecessor: 'u1',
        metadata: { interjections: [{ beforeStep: 0, kind: 'steer', text: 'faster' }, { bogus: true } as never] },
      },
    ],
  });
  assert.deepEqual(shape(s), ['user:go', 'assistant:ok', 'steer:faster']);
});

test('a live steer shows in the stream and the next text starts a new segment', () => {
  const s = run([
    { type: 'userSent', text: 'go', predecessor: null },
    ev('turn.started'),
    ev('text.delta', { text: 'Working' }),
    { type: 'interjection', mode: 'steer', text: 'use tabs' },
    ev('text.delta', { text: 'With tabs.' }),
    { type: 'turnResult', result: result({ text: 'Working\n\nWith tabs.' }) },
  ]);
  assert.deepEqual(shape(s), ['user:go', 'assistant:Working', 'steer:use tabs', 'assistant:With tabs.']);
  assert.equal(messages(s)[0].nodeId, 'u1', 'the steer is not mistaken for the turn\'s user message');
  assert.equal(messages(s)[2].nodeId, 'a1');
});

test('a call refused by a hook keeps the reason on its card, live and from history', () => {
  const s = run([
    ...ourTurn(),
    ev('tool.started', { toolCallId: 'c9', name: 'run_command', kind: 'execute', title: 'Run `rm -rf /`', input: { command: 'rm -rf /' } }),
    ev('tool.finished', { toolCallId: 'c9', status: 'failed', output: 'Denied by a tool gate: no shell today', blockedReason: 'no shell today' }),
  ]);
  const [card] = tools(s);
  assert.equal(card.status, 'failed');
  assert.equal(card.blockedReason, 'no shell today');
  const loaded = reduce(initialState(), {
    type: 'history',
    sessionId: S,
    headId: 'a1',
    nodes: [
      { id: 'u1', role: 'user', text: 'go', createdAt: '' },
      {
        id: 'a1', role: 'assistant', text: '', predecessor: 'u1', createdAt: '', status: 'done',
        toolCalls: [{ id: 'c9', name: 'run_command', kind: 'execute', status: 'failed', output: 'Denied', blockedReason: 'no shell today' }],
      },
    ],
  } as HostMessage);
  assert.equal(tools(loaded)[0]?.blockedReason, 'no shell today');
});

test('an MCP tool card keeps the server and tool from tool.started and from the approval', () => {
  const mcp = { server: 'github', tool: 'create_issue' };
  const input = { title: 'Bug', body: 'x'.repeat(5000) };
  const started = run([
    ...ourTurn(),
    ev('tool.started', { toolCallId: 'c1', name: 'mcp__github__create_issue', kind: 'other', title: 'MCP github: create_issue', input, mcp }),
  ]);
  assert.deepEqual(tools(started)[0].mcp, mcp);
  const asked = run([
    { type: 'reset', sessionId: S },
    {
      type: 'permission',
      requestId: 'p1',
      turnId: 't1',
      toolCall: { toolCallId: 'c2', name: 'mcp__github__create_issue', kind: 'other', title: 'MCP github: create_issue', input, mcp },
      options: [{ optionId: 'o1', name: 'Allow once', kind: 'allow_once' }],
    },
  ]);
  const card = tools(asked)[0];
  assert.deepEqual(card.mcp, mcp);
  assert.equal((card.input.body as string).length, 5000, 'the card holds the whole input');
  const described = { ...mcp, description: 'Create an issue.' };
  const withText = run([
    { type: 'reset', sessionId: S },
    {
      type: 'permission',
      requestId: 'p2',
      turnId: 't1',
      toolCall: { toolCallId: 'c3', name: 'mcp__github__create_issue', kind: 'other', title: 'MCP github: create_issue', input, mcp: described },
      options: [{ optionId: 'o1', name: 'Allow once', kind: 'allow_once' }],
    },
  ]);
  assert.equal(tools(withText)[0].mcp?.description, 'Create an issue.', 'the approval carries what the server says');
});

test("another editor's turn shows its message, its approval read-only, then the outcome", () => {
  let s = reduce(initialState(), { type: 'history', sessionId: 's1', headId: 'h0', nodes: [] });
  const ev = (type: string, data: Record<string, unknown>) =>
    ({ type: 'event', event: { type, sessionId: 's1', turnId: 't1', data } }) as const;
  s = reduce(s, ev('turn.started', { source: 'user', text: 'write a.txt', clientTurnId: 'vscode-other', userNodeId: 'u1', predecessor: 'h0' }));
  const msg = s.items.find((it) => it.kind === 'message');
  assert.ok(msg && msg.kind === 'message' && msg.role === 'user' && msg.elsewhere && msg.text === 'write a.txt');
  assert.equal(s.busy, true);
  const options = [{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' as const }];
  s = reduce(s, ev('permission.requested', { readOnly: true, options, toolCall: { toolCallId: 'c1', name: 'write_file', kind: 'edit', title: 'Write a.txt', input: { path: 'a.txt' } } }));
  const card = () => s.items.find((it) => it.kind === 'tool' && it.toolCallId === 'c1');
  let c = card();
  assert.ok(c && c.kind === 'tool' && c.permission?.readOnly && c.permission.choice === undefined);
  s = reduce(s, ev('permission.resolved', { toolCallId: 'c1', outcome: 'selected', optionId: 'allow_once', kind: 'allow_once' }));
  c = card();
  assert.ok(c && c.kind === 'tool' && c.permission?.choice === 'allow_once');
});

test('a prompt reaches only the card of its own turn, even when an older card has the same call id', () => {
  // After a server restart a model may reuse a call id; the server's ids never repeat, and the
  // card is keyed by turn id + call id anyway.
  let s = run([
    { type: 'history', sessionId: S, headId: 'old_reply', nodes: [
      { id: 'u_old', role: 'user', text: 'run one', predecessor: null, createdAt: '', metadata: {} },
      { id: 'old_reply', role: 'assistant', text: 'ran', predecessor: 'u_old', createdAt: '', metadata: {},
        toolCalls: [{ id: 'offline_1', name: 'run_command', kind: 'execute', input: { command: 'echo one' }, status: 'completed', step: 0 }] },
    ] },
    { type: 'userSent', text: 'run two', predecessor: 'old_reply' },
    ev('tool.started', { toolCallId: 'offline_1', name: 'run_command', kind: 'execute', title: 'Run `echo two`', input: { command: 'echo two' } }, 'new_reply'),
    permission('p1', 'offline_1', 'new_reply'),
  ]);
  const [old, fresh] = tools(s);
  assert.equal(old.turnId, 'old_reply');
  assert.equal(old.permission, null, 'the old card takes no prompt');
  assert.equal(old.input.command, 'echo one');
  assert.equal(fresh.permission?.requestId, 'p1');
  assert.equal(fresh.turnId, 'new_reply');
  s = reduce(s, ev('tool.finished', { toolCallId: 'offline_1', status: 'failed', output: 'rejected' }, 'new_reply'));
  assert.equal(tools(s)[0].status, 'completed', 'a finish of another turn leaves the old card alone');
  assert.equal(tools(s)[1].status, 'failed');
});

test('a compound command card lists its parts and a child prompt its label', () => {
  const s = run([
    { type: 'reset', sessionId: S },
    { type: 'permission', requestId: 'p1', turnId: 't2', label: 'helper',
      toolCall: { toolCallId: 'c9', name: 'run_command', kind: 'execute', title: '[helper] Run', input: { command: 'ls; id' }, parts: ['ls', 'id'] },
      options: [{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' }] },
  ]);
  assert.deepEqual(tools(s)[0].parts, ['ls', 'id']);
  assert.equal(tools(s)[0].label, 'helper');
  assert.equal(tools(s)[0].turnId, 't2');
});

test('older history pages go above what is shown, with unique keys, until none remain', () => {
  const last = reduce(initialState(), {
    type: 'history', sessionId: S, headId: 'a2', hasMore: true,
    nodes: [
      { id: 'u2', role: 'user', text: 'two', predecessor: 'a1', createdAt: '', metadata: {} },
      { id: 'a2', role: 'assistant', text: 'r2', predecessor: 'u2', createdAt: '', metadata: {} },
    ],
  });
  assert.equal(last.hasMore, true);
  assert.equal(last.oldestNodeId, 'u2');
  const all = reduce(last, {
    type: 'olderHistory', sessionId: S, headId: 'a2', hasMore: false,
    nodes: [
      { id: 'u1', role: 'user', text: 'one', predecessor: null, createdAt: '', metadata: {} },
      { id: 'a1', role: 'assistant', text: 'r1', predecessor: 'u1', createdAt: '', metadata: {} },
    ],
  });
  assert.deepEqual(messages(all).map((m) => m.text), ['one', 'r1', 'two', 'r2']);
  assert.equal(new Set(all.items.map((i) => i.key)).size, all.items.length);
  assert.equal(all.hasMore, false);
  assert.equal(all.oldestNodeId, 'u1');
  // a page of another session or branch (the user moved on meanwhile) is dropped
  const stale = reduce(all, { type: 'olderHistory', sessionId: 'other', headId: 'a2', hasMore: true,
    nodes: [{ id: 'z', role: 'user', text: 'z', predecessor: null, createdAt: '', metadata: {} }] });
  assert.equal(stale, all);
});

test("another editor's question shows read-only with its answer; this editor's own is asked once", () => {
  let s = reduce(initialState(), { type: 'history', sessionId: 's1', headId: 'h0', nodes: [] });
  const ev = (type: string, data: Record<string, unknown>) =>
    ({ type: 'event', event: { type, sessionId: 's1', turnId: 't1', data } }) as const;
  s = reduce(s, ev('question.asked', { questionId: 'q1', question: 'Proceed?', options: ['yes', 'no'], allowFreeText: false }));
  const q = () => s.items.filter((it) => it.kind === 'question');
  assert.equal(q().length, 1);
  assert.ok(q()[0].kind === 'question' && q()[0].readOnly);
  s = reduce(s, ev('question.replied', { questionId: 'q1', answer: 'yes' }));
  assert.ok(q()[0].kind === 'question' && q()[0].answer === 'yes');
  // asked here: the request replaces the event's card (in either order), one live card
  s = reduce(s, ev('question.asked', { questionId: 'q2', question: 'Colour?', options: [], allowFreeText: true }));
  s = reduce(s, { type: 'question', requestId: 'r2', questionId: 'q2', question: 'Colour?', options: [], allowFreeText: true });
  s = reduce(s, ev('question.asked', { questionId: 'q2', question: 'Colour?', options: [], allowFreeText: true }));
  const mine = q().filter((it) => it.kind === 'question' && it.questionId === 'q2');
  assert.equal(mine.length, 1);
  assert.ok(mine[0].kind === 'question' && !mine[0].readOnly && mine[0].requestId === 'r2');
});

test('a subagent streaming in the same session does not mix into the reply', () => {
  const s = run([
    { type: 'history', sessionId: S, headId: 'a0', nodes: [] },
    { type: 'userSent', text: 'spawn a helper', predecessor: 'a0', clientTurnId: 'turn-1' },
    ev('turn.started', { clientTurnId: 'turn-1', predecessor: 'a0', source: 'user' }, 'p1'),
    ev('text.delta', { text: 'ok (scri' }, 'p1'),
    ev('turn.started', { source: 'agent_spawn', predecessor: null, text: 'do it' }, 'sub1'),
    ev('text.delta', { text: 'ok (script reply A)' }, 'sub1'),
    ev('tool.started', { toolCallId: 'c9', name: 'read_file', kind: 'read', title: 'Read x', input: {} }, 'sub1'),
    ev('text.delta', { text: 'pt reply B)' }, 'p1'),
    ev('turn.finished', { ...result({ assistantNodeId: 'sub1', headId: 'sub1', text: 'ok (script reply A)' }) }, 'sub1'),
  ]);
  assert.deepEqual(messages(s).map((m) => [m.role, m.text]), [
    ['user', 'spawn a helper'],
    ['assistant', 'ok (script reply B)'],
  ]);
  assert.equal(tools(s).length, 0, "the subagent's tool call is not on the parent's stream");
  assert.equal(s.busy, true, "the subagent's end does not end the parent's turn");
});

test("a subagent's stream shows live in its own section, never in the reply", () => {
  const s = run([
    { type: 'history', sessionId: S, headId: 'a0', nodes: [] },
    { type: 'userSent', text: 'spawn a helper', predecessor: 'a0', clientTurnId: 'turn-1' },
    ev('turn.started', { clientTurnId: 'turn-1', predecessor: 'a0', source: 'user' }, 'p1'),
    ev('subagent.started', { agentId: 'ag1', label: 'tests', kind: 'agent' }, 'p1'),
    ev('turn.started', { source: 'agent_spawn', predecessor: null, text: 'run the tests', agentId: 'ag1' }, 'sub1'),
    ev('text.delta', { text: 'Running **pytest**' }, 'sub1'),
    ev('tool.started', { toolCallId: 'c9', name: 'run_command', kind: 'execute', title: 'Run pytest', input: {} }, 'sub1'),
    ev('text.delta', { text: ' now.' }, 'sub1'),
    ev('text.delta', { text: 'Waiting for it.' }, 'p1'),
  ]);
  const section = s.items.find((i) => i.kind === 'subagent');
  assert.ok(section && section.kind === 'subagent');
  assert.deepEqual([section.label, section.turnId, section.text, section.tools, section.status],
    ['tests', 'sub1', 'Running **pytest** now.', ['Run pytest'], 'running']);
  assert.deepEqual(messages(s).map((m) => [m.role, m.text]), [['user', 'spawn a helper'], ['assistant', 'Waiting for it.']]);
  assert.equal(tools(s).length, 0);
  const ended = run([ev('turn.finished', { ...result({ assistantNodeId: 'sub1', status: 'done' }) }, 'sub1')], s);
  assert.equal(ended.items.find((i) => i.kind === 'subagent')?.kind === 'subagent' && (ended.items.find((i) => i.kind === 'subagent') as { status: string }).status, 'done');
  assert.equal(ended.busy, true, "the subagent's end does not end the parent's turn");
});

test("a subagent's report continuing the branch shows as a report, not as You", () => {
  const report = '[Agent tests finished (done); its branch tip is s1:a9_reply]\n\nAll 12 tests pass.';
  let s = run([
    { type: 'history', sessionId: S, headId: 'a1', nodes: [] },
    ev('turn.started', { source: 'follow_up', predecessor: 'a1', text: report, userNodeId: 'u2' }, 'u2_reply'),
    ev('text.delta', { text: 'Good: the tests pass.' }, 'u2_reply'),
    ev('turn.finished', { ...result({ userNodeId: 'u2', assistantNodeId: 'u2_reply', headId: 'u2_reply' }) }, 'u2_reply'),
  ]);
  assert.deepEqual(messages(s).map((m) => [m.role, m.text, m.from ?? null]), [
    ['report', 'All 12 tests pass.', 'Report from tests (done)'],
    ['assistant', 'Good: the tests pass.', null],
  ]);
  assert.equal(s.headId, 'u2_reply');
  // and the same from history
  s = reduce(s, {
    type: 'history', sessionId: S, headId: 'u2_reply', nodes: [
      { id: 'u2', role: 'user', text: report, predecessor: 'a1', createdAt: '', metadata: { source: 'follow_up' } },
      { id: 'u2_reply', role: 'assistant', text: 'Good: the tests pass.', predecessor: 'u2', createdAt: '', metadata: {} },
    ],
  });
  assert.deepEqual(messages(s).map((m) => [m.role, m.text]), [['report', 'All 12 tests pass.'], ['assistant', 'Good: the tests pass.']]);
});

test('a turn on another branch of the session is not shown', () => {
  const s = run([
    { type: 'history', sessionId: S, headId: 'a1', nodes: [] },
    ev('turn.started', { source: 'send_message', predecessor: 'zz', text: 'hello' }, 'x1'),
    ev('text.delta', { text: 'elsewhere' }, 'x1'),
  ]);
  assert.equal(s.items.length, 0);
  assert.equal(s.busy, false);
});

test('the sessions list: this workspace first, newest first, filtered by every word', () => {
  const mk = (id: string, title: string, workspace: string | undefined, updatedAt: string) => ({ id, title, workspace, updatedAt, status: 'idle' as const });
  const list = [
    mk('s1', 'fix the parser', '/home/me/proj', '2026-11-30T10:00:00Z'),
    mk('s2', 'write docs', '/home/me/other', '2026-12-01T09:00:00Z'),
    mk('s3', 'parser tests', '/home/me/proj/', '2026-12-01T08:00:00Z'),
    mk('s4', 'old', undefined, '2026-01-01T00:00:00Z'),
  ];
  const all = orderSessions(list, '/home/me/proj');
  assert.deepEqual(all.here.map((s) => s.id), ['s3', 's1']);
  assert.deepEqual(all.elsewhere.map((s) => s.id), ['s2', 's4']);
  const found = orderSessions(list, '/home/me/proj', 'PARSER fix');
  assert.deepEqual([...found.here, ...found.elsewhere].map((s) => s.id), ['s1']);
  assert.deepEqual(orderSessions(list, '/home/me/proj', 'other').elsewhere.map((s) => s.id), ['s2'], 'the folder is searched too');
  assert.deepEqual(orderSessions(list, null).here, [], 'no workspace: everything is elsewhere');
});

test('reloaded history keeps approval labels, an interrupted turn, its call and the checkpoint card', () => {
  let s = reduce(initialState(), {
    type: 'history', sessionId: S, headId: 'a1', nodes: [
      { id: 'u1', role: 'user', text: 'do it', predecessor: null, createdAt: '', metadata: {} },
      {
        id: 'a1', role: 'assistant', text: 'Writing.\n\n[interrupted]', predecessor: 'u1', status: 'interrupted', createdAt: '',
        metadata: { steps: ['Writing.'], checkpointId: 'cp1', usage: { inputTokens: 1200, outputTokens: 7 } },
        toolCalls: [
          { id: 'c1', name: 'write_file', kind: 'edit', input: {}, status: 'completed', step: 0, approval: { by: 'user', option: 'allow_always', optionId: 'o2' } },
          { id: 'c2', name: 'run_command', kind: 'execute', input: {}, status: 'failed', step: 0, output: 'The user rejected this tool call.' },
          { id: 'c3', name: 'run_command', kind: 'execute', input: {}, status: 'in_progress', step: 0, title: 'Run `sleep 9`' },
          { id: 'c4', name: 'read_file', kind: 'read', input: {}, status: 'completed', step: 0, approval: { by: 'mode', mode: 'ask' } },
        ],
      },
    ],
  });
  const cards = tools(s);
  assert.deepEqual(cards.map((c) => c.decided), ['Always allowed', 'Rejected', null, null]);
  assert.equal(cards[2].status, 'failed');
  assert.match(cards[2].output ?? '', /Interrupted/);
  const [reply] = messages(s).filter((m) => m.role === 'assistant');
  assert.equal(reply.text, 'Writing.', 'the [interrupted] marker is not shown as text');
  assert.deepEqual(reply.usage, { inputTokens: 1200, outputTokens: 7 });
  const notes = s.items.filter((i): i is NoteItem => i.kind === 'note');
  assert.ok(notes.some((n) => n.level === 'warning' && /interrupted/.test(n.text)));
  const card = s.items.find((i) => i.kind === 'checkpoint');
  assert.ok(card && card.kind === 'checkpoint' && card.files === null, 'a placeholder until the files are known');
  s = reduce(s, { type: 'checkpoints', checkpoints: [{ id: 'cp1', createdAt: '', message: '', kind: 'turn', files: [{ path: 'a.txt', status: 'added' }] }] });
  const filled = s.items.find((i) => i.kind === 'checkpoint');
  assert.ok(filled && filled.kind === 'checkpoint' && filled.files?.[0].path === 'a.txt');
});

test("a running command's output streams into its card; the finish replaces it", () => {
  let s = run([
    ...ourTurn(),
    ev('tool.started', { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'Run make', input: { command: 'make' } }),
    ev('tool.output', { toolCallId: 'c1', text: 'compiling a.c\n' }),
    ev('tool.output', { toolCallId: 'c1', text: 'compiling b.c\n' }),
    ev('tool.output', { toolCallId: 'c9', text: 'another call' }),
    ev('tool.output', { toolCallId: 'c1', text: 'subagent' }, 'sub1'),
  ]);
  assert.equal(tools(s)[0].live, 'compiling a.c\ncompiling b.c\n');
  s = reduce(s, ev('tool.output', { toolCallId: 'c1', text: 'x'.repeat(70 * 1024) }));
  assert.equal(tools(s)[0].live?.length, 64 * 1024, 'the card keeps the tail');
  s = reduce(s, ev('tool.finished', { toolCallId: 'c1', status: 'completed', output: 'exit code 0\ncompiling a.c\ncompiling b.c' }));
  assert.equal(tools(s)[0].live, undefined);
  assert.match(tools(s)[0].output ?? '', /^exit code 0/);
});

test('the context meter follows the shown branch: from history, cleared on a session without turns', () => {
  const withTurn: HostMessage = { type: 'history', sessionId: S, headId: 'a2', nodes: [
    { id: 'u1', role: 'user', text: 'hi', createdAt: '', metadata: {} },
    { id: 'a1', role: 'assistant', text: 'one', createdAt: '', predecessor: 'u1', metadata: { context: { estimate: 900, contextWindow: 128000 } } },
    { id: 's1', role: 'summary', text: 'summary', createdAt: '', predecessor: 'a1', metadata: {} },
    { id: 'u2', role: 'user', text: 'more', createdAt: '', predecessor: 's1', metadata: {} },
    { id: 'a2', role: 'assistant', text: 'two', createdAt: '', predecessor: 'u2', metadata: { context: { estimate: 64000, contextWindow: 128000 } } },
  ] };
  let s = run([withTurn]);
  assert.deepEqual(s.context, { usedTokens: 64000, windowTokens: 128000, compactions: 1 });
  const live = run([...ourTurn(), ev('context.usage', { usedTokens: 70000, windowTokens: 128000, compactions: 2, path: 'none' })], s);
  assert.deepEqual(live.context, { usedTokens: 70000, windowTokens: 128000, compactions: 2 });
  // another session: its own meter, or none (not the last session's)
  s = run([{ type: 'history', sessionId: 'other', headId: 'u1', nodes: [{ id: 'u1', role: 'user', text: 'x', createdAt: '', metadata: {} }] }], s);
  assert.equal(s.context, null);
  s = run([withTurn, { type: 'reset', sessionId: null }], s);
  assert.equal(s.context, null);
});

test('a call the cancel cut shows as cancelled, live and from history', () => {
  let s = run([...ourTurn(), ev('tool.started', { toolCallId: 'c1', name: 'run_command', kind: 'execute', title: 'sleep', input: {} }),
    ev('tool.started', { toolCallId: 'c2', name: 'read_file', kind: 'read', title: 'read', input: {} }),
    ev('tool.finished', { toolCallId: 'c1', status: 'failed', output: 'cut', cancelled: true })]);
  const card = (st: ChatState, id: string) => st.items.find((i): i is ToolItem => i.kind === 'tool' && i.toolCallId === id)!;
  assert.equal(card(s, 'c1').cancelled, true);
  s = run([{ type: 'turnResult', result: result({ status: 'cancelled' }) }], s);
  assert.equal(card(s, 'c2').cancelled, true, 'a call still running when the turn was cancelled');
  const h = run([{ type: 'history', sessionId: S, headId: 'a1', nodes: [
    { id: 'u1', role: 'user', text: 'go', createdAt: '', metadata: {} },
    { id: 'a1', role: 'assistant', text: 'x', createdAt: '', predecessor: 'u1', status: 'cancelled', metadata: {}, toolCalls: [
      { id: 'c1', name: 'run_command', kind: 'execute', input: {}, status: 'failed', step: 0, cancelled: true, output: 'cut' },
      { id: 'c3', name: 'read_file', kind: 'read', input: {}, status: 'completed', step: 0, output: 'ok' },
    ] },
  ] }]);
  const c1 = h.items.find((i): i is ToolItem => i.kind === 'tool' && i.toolCallId === 'c1');
  const c3 = h.items.find((i): i is ToolItem => i.kind === 'tool' && i.toolCallId === 'c3');
  assert.equal(c1?.cancelled, true);
  assert.equal(c3?.cancelled, undefined);
});

test('a user message shows its attachments: as sent, and from history as the model saw them', () => {
  let s = run([{ type: 'reset', sessionId: S },
    { type: 'userSent', text: 'explain', predecessor: null, clientTurnId: 'turn-1', context: [{ kind: 'selection', label: 'a.py:3-5', text: 'x\n' }] }]);
  assert.deepEqual(messages(s)[0].context, [{ kind: 'selection', label: 'a.py:3-5', text: 'x\n' }]);
  s = run([{ type: 'history', sessionId: S, headId: 'u1', nodes: [{ id: 'u1', role: 'user', text: 'explain', createdAt: '', metadata: {
    context: [{ kind: 'file', uri: 'file:///ws/a.py', path: 'a.py', text: 'unsaved text\n', unsaved: true }] } }] }]);
  assert.deepEqual(messages(s)[0].context, [{ kind: 'file', label: 'a.py', text: 'unsaved text\n', unsaved: true }]);
  // chips above the input survive a new session (they belong to the next message)
  s = run([{ type: 'attachments', chips: [{ id: 'active', kind: 'file', label: 'a.py', active: true }] }, { type: 'reset', sessionId: null }], s);
  assert.equal(s.attachments.length, 1);
});

test('the plan follows plan.updated live and the last todo_write from history', () => {
  const entries = [
    { content: 'Read the code', status: 'completed' },
    { content: 'Fix the bug', status: 'in_progress', activeForm: 'Fixing the bug' },
    { content: 'Run the tests', status: 'pending' },
  ];
  let s = run([...ourTurn(), ev('plan.updated', { entries })]);
  assert.deepEqual(s.plan, entries);
  s = run([ev('plan.updated', { entries: [{ content: 'x', status: 'weird' }, { nope: 1 }] })], s);
  assert.deepEqual(s.plan, [{ content: 'x', status: 'pending' }], 'untrusted entries are checked');
  // another turn of the session (a subagent's) does not replace the shown branch's plan
  s = run([ev('plan.updated', { entries: [] }, 't-other')], s);
  assert.deepEqual(s.plan, [{ content: 'x', status: 'pending' }]);
  const todo = (id: string, status: 'completed' | 'failed', todos: unknown[]) =>
    ({ id, name: 'todo_write', kind: 'think' as const, input: { todos }, status, step: 0, output: '' });
  const h = run([{ type: 'history', sessionId: S, headId: 'a2', nodes: [
    { id: 'u1', role: 'user', text: 'go', createdAt: '', metadata: {} },
    { id: 'a1', role: 'assistant', text: 'x', createdAt: '', predecessor: 'u1', metadata: {}, toolCalls: [
      todo('c1', 'completed', [{ content: 'old', status: 'pending' }])] },
    { id: 'u2', role: 'user', text: 'more', createdAt: '', predecessor: 'a1', metadata: {} },
    { id: 'a2', role: 'assistant', text: 'y', createdAt: '', predecessor: 'u2', metadata: {}, toolCalls: [
      todo('c2', 'completed', entries), todo('c3', 'failed', [{ content: 'refused', status: 'pending' }])] },
  ] }]);
  assert.deepEqual(h.plan, entries, 'the last completed todo_write of the branch');
  const none = run([{ type: 'history', sessionId: 'other', headId: 'u1', nodes: [{ id: 'u1', role: 'user', text: 'x', createdAt: '', metadata: {} }] }], h);
  assert.equal(none.plan, null);
});

test('thoughts stream into their own collapsed item, never into the reply', () => {
  const s = run([
    ...ourTurn(),
    ev('thought.delta', { text: 'Read the ' }),
    ev('thought.delta', { text: 'config first.' }),
    ev('text.delta', { text: 'It is 1.2.3.' }),
    ev('thought.delta', { text: 'Now check.' }),
  ]);
  const thoughts = s.items.filter((i) => i.kind === 'thought');
  assert.deepEqual(thoughts.map((t) => t.kind === 'thought' && t.text), ['Read the config first.', 'Now check.']);
  assert.equal(messages(s).filter((m) => m.role === 'assistant').map((m) => m.text).join(''), 'It is 1.2.3.');
  const done = reduce(s, ev('turn.finished', result({ text: 'It is 1.2.3.' }) as unknown as Record<string, unknown>));
  assert.ok(done.items.every((i) => i.kind !== 'thought' || !i.streaming));
});

test('history shows each step\'s stored thoughts before its text', () => {
  const s = run([{
    type: 'history', sessionId: S, headId: 'a1', nodes: [
      { id: 'u1', role: 'user', text: 'go', predecessor: null, caller: null, createdAt: '', metadata: {} },
      {
        id: 'a1', role: 'assistant', text: 'Done.', predecessor: 'u1', caller: null, createdAt: '', status: 'done',
        metadata: { steps: ['', 'Done.'], thoughts: [{ step: 0, text: 'Plan it.', source: 'anthropic', signature: 'sig' }, { step: 0, text: '', source: 'anthropic', signature: 'omitted' }, { step: 1, text: 'Finish.', source: 'anthropic' }] },
      },
    ],
  }]);
  const kinds = s.items.map((i) => (i.kind === 'thought' ? `thought:${i.text}` : i.kind === 'message' ? `${i.role}:${i.text}` : i.kind));
  assert.deepEqual(kinds, ['user:go', 'thought:Plan it.', 'thought:Finish.', 'assistant:Done.']);
});

test('a reloaded panel re-attached to a running turn: its message once, its stream and its live subagent section back', () => {
  const replayed = (type: string, data: Record<string, unknown>, turnId: string): HostMessage => {
    const m = ev(type, data, turnId);
    return m.type === 'event' ? { ...m, event: { ...m.event, replayed: true } } : m;
  };
  const s = run([
    { type: 'reset', sessionId: S },
    // the history without the running turn's nodes, its head where the turn started
    { type: 'history', sessionId: S, headId: 'a0', nodes: [] },
    replayed('turn.started', { predecessor: 'a0', source: 'user', userNodeId: 'u1', assistantNodeId: 'p1', text: 'spawn a helper' }, 'p1'),
    replayed('text.delta', { text: 'Spawning.' }, 'p1'),
    replayed('subagent.started', { agentId: 'ag1', label: 'tests', kind: 'agent' }, 'p1'),
    replayed('turn.started', { source: 'agent_spawn', predecessor: null, text: 'run the tests', agentId: 'ag1' }, 'sub1'),
    replayed('text.delta', { text: 'Running' }, 'sub1'),
    // then live
    ev('text.delta', { text: ' pytest.' }, 'sub1'),
    ev('text.delta', { text: ' Waiting.' }, 'p1'),
  ]);
  assert.deepEqual(messages(s).map((m) => [m.role, m.text, m.elsewhere ?? false]), [['user', 'spawn a helper', false], ['assistant', 'Spawning.', false], ['assistant', ' Waiting.', false]]);
  const section = s.items.find((i) => i.kind === 'subagent');
  assert.ok(section && section.kind === 'subagent');
  assert.deepEqual([section.label, section.text, section.status], ['tests', 'Running pytest.', 'running']);
  assert.equal(s.busy, true, 'the re-attached turn runs: Cancel and steering act on it');
  const done = run([ev('turn.finished', { ...result({ assistantNodeId: 'p1', userNodeId: 'u1', headId: 'p1' }) }, 'p1')], s);
  assert.equal(done.busy, false);
});

test('a reloaded panel gets back the section of a subagent that outlived the turn that spawned it', () => {
  const replayed = (type: string, data: Record<string, unknown>, turnId: string): HostMessage => {
    const m = ev(type, data, turnId);
    return m.type === 'event' ? { ...m, event: { ...m.event, replayed: true } } : m;
  };
  const s = run([
    { type: 'reset', sessionId: S },
    { type: 'history', sessionId: S, headId: 'a1', nodes: [] },
    replayed('subagent.started', { agentId: 'ag1', label: 'tests', kind: 'agent' }, 'a1'),
    replayed('turn.started', { source: 'agent_spawn', predecessor: null, text: 'run the tests', agentId: 'ag1' }, 'sub1'),
    replayed('text.delta', { text: 'Running' }, 'sub1'),
    ev('text.delta', { text: ' pytest.' }, 'sub1'),
  ]);
  const section = s.items.find((i) => i.kind === 'subagent');
  assert.ok(section && section.kind === 'subagent');
  assert.deepEqual([section.label, section.text, section.status], ['tests', 'Running pytest.', 'running']);
  assert.equal(s.busy, false, 'no turn of the panel runs: only the subagent');
});
