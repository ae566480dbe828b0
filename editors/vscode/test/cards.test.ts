// Unit tests for what a tool card says (its badge) and how it lays out an approval's options.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splitOptions, toolStatusLabel } from '../src/webview/cards';
import type { PermissionPrompt, ToolItem } from '../src/webview/state';

const OPTIONS = [
  { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' as const },
  { optionId: 'allow_always', name: 'Always allow edits to a.py in this session', kind: 'allow_always' as const },
  { optionId: 'allow_always_workspace', name: 'Always allow edits to a.py in this workspace', kind: 'allow_always' as const },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' as const },
  { optionId: 'reject_always', name: 'Always reject', kind: 'reject_always' as const },
];

function tool(over: Partial<ToolItem>, permission: PermissionPrompt | null = null): ToolItem {
  return {
    kind: 'tool', key: 'k', toolCallId: 'call_0mx1', name: 'edit_file', toolKind: 'edit', title: 'a.py',
    status: 'in_progress', input: {}, output: null, blockedReason: null, diff: null, mcp: null,
    permission, turnId: 't', ...over,
  };
}

test('a card waiting for approval says so, not "in progress"; an answered one says its status', () => {
  const waiting = tool({}, { requestId: 'r', options: OPTIONS });
  assert.deepEqual(toolStatusLabel(waiting), { label: 'waiting for approval', badge: 'waiting' });
  assert.equal(toolStatusLabel(tool({}, { requestId: 'r', options: OPTIONS, readOnly: true })).label, 'waiting for the other editor');
  assert.equal(toolStatusLabel(tool({}, { requestId: 'r', options: OPTIONS, choice: 'allow_once' })).label, 'in progress');
  assert.equal(toolStatusLabel(tool({ status: 'failed' }, { requestId: 'r', options: OPTIONS, withdrawn: 'timeout' })).label, 'failed');
  assert.equal(toolStatusLabel(tool({ cancelled: true }, { requestId: 'r', options: OPTIONS })).label, 'cancelled');
  assert.equal(toolStatusLabel(tool({ status: 'completed' })).label, 'completed');
});

test('ask_user waits for an answer, it is not thinking', () => {
  assert.deepEqual(toolStatusLabel(tool({ name: 'ask_user', toolKind: 'think' })), { label: 'waiting for your answer', badge: 'waiting' });
  assert.equal(toolStatusLabel(tool({ name: 'ask_user', toolKind: 'think', status: 'completed' })).label, 'completed');
});

test('Allow once and Reject answer on the spot; the standing options sit behind one control', () => {
  const { now, standing } = splitOptions(OPTIONS);
  assert.deepEqual(now.map((o) => o.optionId), ['allow_once', 'reject_once']);
  assert.deepEqual(standing.map((o) => o.optionId), ['allow_always', 'allow_always_workspace', 'reject_always']);
  // every option stays reachable, each exactly once
  assert.deepEqual([...now, ...standing].map((o) => o.optionId).sort(), OPTIONS.map((o) => o.optionId).sort());
  // a prompt with no one-off answer (a question's choices, say) shows all of them
  const only = [{ optionId: 'a', name: 'A', kind: 'allow_always' }, { optionId: 'b', name: 'B', kind: 'reject_always' }];
  assert.deepEqual(splitOptions(only), { now: only, standing: [] });
});
