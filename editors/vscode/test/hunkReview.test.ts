// Unit tests for per-hunk review: the text written for the accepted hunks, where each hunk lands,
// and the approval answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compose, hunksLabel, reviewAnswer, slices, splitLines } from '../src/chat/hunkReview';
import type { PreviewHunk } from '../src/wire';

const OLD = 'one\ntwo\nthree\nfour\n';
const NEW = 'zero\none\nTWO\nthree\n';
// as the server lists them (core/text_hunks.py): an insertion at the top, a change, a deletion
const HUNKS: PreviewHunk[] = [
  { index: 0, oldStart: 0, oldLines: 0, newStart: 1, newLines: 1 },
  { index: 1, oldStart: 2, oldLines: 1, newStart: 3, newLines: 1 },
  { index: 2, oldStart: 4, oldLines: 1, newStart: 4, newLines: 0 },
];

test('lines split on \\n only, endings kept', () => {
  assert.deepEqual(splitLines('a\r\nb\fc\nlast'), ['a\r\n', 'b\fc\n', 'last']);
  assert.deepEqual(splitLines(''), []);
  assert.deepEqual(slices(HUNKS[0]), { i1: 0, i2: 0, j1: 0, j2: 1 });
  assert.deepEqual(slices(HUNKS[2]), { i1: 3, i2: 4, j1: 4, j2: 4 });
});

test('the written text has exactly the accepted hunks; each hunk is placed in it', () => {
  assert.equal(compose(OLD, NEW, HUNKS, new Set([0, 1, 2])).text, NEW);
  assert.equal(compose(OLD, NEW, HUNKS, new Set()).text, OLD);
  const some = compose(OLD, NEW, HUNKS, new Set([0, 2]));
  assert.equal(some.text, 'zero\none\ntwo\nthree\n');
  assert.deepEqual(some.placed, [
    { index: 0, line: 0, lines: 1, accepted: true },
    { index: 1, line: 2, lines: 1, accepted: false },
    { index: 2, line: 4, lines: 0, accepted: true },
  ]);
  assert.equal(compose(OLD, NEW, HUNKS, new Set([1])).text, 'one\nTWO\nthree\nfour\n');
});

test('the answer: every hunk is the whole edit, none a rejection, some their indices', () => {
  assert.deepEqual(reviewAnswer(HUNKS, new Set([0, 1, 2])), { kind: 'allow_once' });
  assert.deepEqual(reviewAnswer(HUNKS, new Set()), { kind: 'reject_once' });
  assert.deepEqual(reviewAnswer(HUNKS, new Set([2, 0])), { kind: 'allow_once', acceptedHunks: [0, 2] });
  assert.deepEqual(reviewAnswer(HUNKS, new Set([0, 7])), { kind: 'allow_once', acceptedHunks: [0] }, 'only hunks of the card');
  assert.equal(hunksLabel([0, 2], 3), '2 of 3 hunks (1, 3)');
});
