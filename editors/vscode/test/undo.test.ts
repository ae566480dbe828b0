// What a restore or undo left as it was is named in its message (files no checkpoint could
// record, something unrecorded in the way), never dropped silently.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextToUndo, notRestoredNote } from '../src/checkpoints/undo';
import type { Checkpoint } from '../src/protocol';

test('a restore that left files names each with its reason', () => {
  assert.equal(notRestoredNote({}), '');
  assert.equal(notRestoredNote({ notRestored: [] }), '');
  const note = notRestoredNote({
    notRestored: [
      { path: 'data.bin', reason: 'larger than checkpoints.max_file_bytes (5 MiB): never recorded' },
      { path: 'pipe', reason: 'not a regular file or symlink: never recorded' },
    ],
  });
  assert.match(note, /NOT restored/);
  assert.match(note, /data\.bin \(larger than checkpoints\.max_file_bytes \(5 MiB\)/);
  assert.match(note, /pipe \(not a regular file/);
});

test('the turn to undo is the newest with files and no standing undo', () => {
  const cp = (id: string, extra: Partial<Checkpoint>): Checkpoint =>
    ({ id, kind: 'turn', files: [{ path: 'a', status: 'modified' }], createdAt: '', message: '', ...extra }) as Checkpoint;
  const list = [cp('c3', { files: [] }), cp('c2', { undoneBy: 'r1' }), cp('c1', {})];
  assert.equal(nextToUndo(list)?.id, 'c1');
});

test('a checkpoint file recorded from an unsaved buffer says so in the tree', async () => {
  const { CheckpointTree } = await import('../src/checkpoints/tree');
  const cp = {
    id: 'c1', parentId: 'c0', createdAt: 'now', message: 'turn t1: edit', kind: 'turn' as const,
    files: [{ path: 'a.py', status: 'modified' as const, unsaved: true }, { path: 'b.py', status: 'added' as const }],
  };
  const tree = new CheckpointTree({} as never, () => 's1');
  const [a, b] = cp.files.map((file) => tree.getTreeItem({ kind: 'file', checkpoint: cp, file }));
  assert.equal(a.description, 'modified · unsaved in the editor');
  assert.equal(b.description, 'added');
});
