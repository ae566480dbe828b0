// Whether a branch switch brings the code along: the setting, else asked once and remembered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHOICES, MEMENTO_KEY, decide, describeSwitch, ownChanges, ownChangesQuestion, type Choice } from '../src/branches/switchCode';
import { Memento } from './support/vscode';

test('the setting decides without asking', async () => {
  const never = (): Promise<Choice | undefined> => assert.fail('asked');
  assert.equal(await decide('always', new Memento(), never), true);
  assert.equal(await decide('never', new Memento(), never), false);
});

test('asked once: a remembered answer is not asked again; a one-time answer is', async () => {
  const store = new Memento();
  let asked = 0;
  const pick = (label: string) => (choices: Choice[]): Promise<Choice | undefined> => {
    asked += 1;
    return Promise.resolve(choices.find((c) => c.label === label));
  };
  assert.equal(await decide('ask', store, pick('Switch the code too')), true);
  assert.equal(store.get(MEMENTO_KEY), undefined);
  assert.equal(await decide('ask', store, pick('Never switch the code')), false);
  assert.equal(store.get(MEMENTO_KEY), 'never');
  assert.equal(await decide('ask', store, pick('Always switch the code')), false);
  assert.equal(asked, 2);
  // dismissed: the files stay as they are
  assert.equal(await decide('ask', new Memento(), () => Promise.resolve(undefined)), false);
  assert.equal(CHOICES.filter((c) => c.remember).length, 2);
});

test('the switch is described with its files and conflicts', () => {
  assert.equal(describeSwitch(['a.txt']), 'Switched the code to this branch (1 file).');
  assert.match(describeSwitch([], ['b.txt']), /already had.*Kept b\.txt/);
});

test("the user's own changes: an unsaved editor, or text other than the state being left", () => {
  const disk: Record<string, string | undefined> = { 'same.py': 'a\n', 'mine.py': 'edited\n', 'new.txt': 'made by hand\n',
    'there.py': 'b\n' /* already the target's: nothing to lose */ };
  const current = (p: string) => ({ text: p === 'open.py' ? 'typing' : disk[p], unsaved: p === 'open.py' });
  const files = [
    { path: 'same.py', status: 'modified' as const, before: 'a\n', after: 'b\n' },
    { path: 'mine.py', status: 'modified' as const, before: 'x\n', after: 'y\n' },
    { path: 'open.py', status: 'deleted' as const, before: 'typing' },
    { path: 'new.txt', status: 'added' as const, after: 'theirs\n' },
    { path: 'gone.txt', status: 'added' as const, after: 'theirs\n' },
    { path: 'there.py', status: 'modified' as const, before: 'old\n', after: 'b\n' },
    { path: 'big.bin', status: 'modified' as const, binary: true },
  ];
  assert.deepEqual(ownChanges(files, current), ['mine.py', 'open.py (unsaved)', 'new.txt']);
  const q = ownChangesQuestion(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
  assert.match(q.message, /^Your own changes to 8 files would be replaced by the branch's code: a, b, c, d, e, f and 2 more\.$/);
  assert.match(q.detail, /Undo brings them back/);
});
