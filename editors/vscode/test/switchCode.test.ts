// Whether a branch switch brings the code along: the setting, else asked once and remembered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHOICES, MEMENTO_KEY, decide, describeSwitch, type Choice } from '../src/branches/switchCode';

class Store {
  data = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    this.data.set(key, value);
    return Promise.resolve();
  }
}

test('the setting decides without asking', async () => {
  const never = (): Promise<Choice | undefined> => assert.fail('asked');
  assert.equal(await decide('always', new Store(), never), true);
  assert.equal(await decide('never', new Store(), never), false);
});

test('asked once: a remembered answer is not asked again; a one-time answer is', async () => {
  const store = new Store();
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
  assert.equal(await decide('ask', new Store(), () => Promise.resolve(undefined)), false);
  assert.equal(CHOICES.filter((c) => c.remember).length, 2);
});

test('the switch is described with its files and conflicts', () => {
  assert.equal(describeSwitch(['a.txt']), 'Switched the code to this branch (1 file).');
  assert.match(describeSwitch([], ['b.txt']), /already had.*Kept b\.txt/);
});
