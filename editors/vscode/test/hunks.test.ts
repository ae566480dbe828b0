// Unit tests for placing hunk lenses and finding the hunk under the cursor.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hunkAt, hunkLine } from '../src/checkpoints/hunks';

const hunks = [
  { oldStart: 2, oldLines: 1, newStart: 2, newLines: 2 }, // lines 2-3 changed
  { oldStart: 10, oldLines: 3, newStart: 11, newLines: 0 }, // 3 lines deleted after line 11
  { oldStart: 20, oldLines: 0, newStart: 18, newLines: 4 }, // 4 lines inserted at 18-21
];

test('a lens sits on the first changed line; a deletion on the line after it', () => {
  assert.deepEqual(hunks.map(hunkLine), [1, 11, 17]);
});

test('the hunk under the cursor, else the nearest', () => {
  assert.equal(hunkAt(hunks, 1), 0);
  assert.equal(hunkAt(hunks, 2), 0);
  assert.equal(hunkAt(hunks, 11), 1);
  assert.equal(hunkAt(hunks, 19), 2);
  assert.equal(hunkAt(hunks, 0), 0);
  assert.equal(hunkAt(hunks, 15), 2);
  assert.equal(hunkAt([], 3), -1);
});
