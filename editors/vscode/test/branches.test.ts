// Unit tests for branch labels: stable as the conversation grows and branches are added.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { branchLabel, sessionTitle } from '../src/branches/label';
import type { BranchInfo } from '../src/protocol';

const b = (extra: Partial<BranchInfo>): BranchInfo => ({ headId: 'h', active: false, length: 2, preview: 'p', ...extra });

test('the first line is main, a fork names when and how it started, a name wins', () => {
  const main = b({ headId: 'h1', preview: 'latest question' });
  const fork = b({ headId: 'h2', forkId: 'u0abc123', startedAt: '2026-12-01T14:05:09Z', startPreview: 'Just say hi', preview: 'later' });
  assert.equal(branchLabel(main), 'main');
  assert.equal(branchLabel(fork, [main, fork]), 'fork 14:05: Just say hi');
  assert.equal(branchLabel({ ...fork, name: 'retry' }), 'retry');
  // the label does not move when the branch grows or a new branch appears before it
  const grown = { ...fork, headId: 'h9', length: 8, preview: 'much later' };
  const newer = b({ headId: 'h3', forkId: 'u0zzz999', startedAt: '2026-12-01T15:00:00Z', startPreview: 'Other idea' });
  assert.equal(branchLabel(grown, [newer, main, grown]), 'fork 14:05: Just say hi');
});

test('two forks that read the same get a short id each', () => {
  const one = b({ forkId: 'u0aaaa11', startedAt: '2026-12-01T14:05:00Z', startPreview: 'again' });
  const two = b({ forkId: 'u0bbbb22', startedAt: '2026-12-01T14:05:30Z', startPreview: 'again' });
  assert.equal(branchLabel(one, [one, two]), 'fork 14:05: again #aaaa11');
  assert.equal(branchLabel(two, [one, two]), 'fork 14:05: again #bbbb22');
});

test('a session without a title is named as such, never by its id', () => {
  assert.equal(sessionTitle({ title: 'Fix the parser' }), 'Fix the parser');
  for (const title of ['', '   ', null, undefined]) assert.equal(sessionTitle({ title }), 'Untitled session');
});
