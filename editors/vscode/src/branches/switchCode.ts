/** Whether a branch switch also switches the workspace's code: the setting, else the answer
 * remembered in global state, else ask once (the answer may be remembered). No `vscode` here. */
import type { SwitchCode } from '../settings';

export const MEMENTO_KEY = 'openprogram.switchCode';

export interface Choice {
  label: string;
  restore: boolean;
  remember?: 'always' | 'never';
}

export const CHOICES: Choice[] = [
  { label: 'Switch the code too', restore: true },
  { label: 'Always switch the code', restore: true, remember: 'always' },
  { label: 'Keep the files as they are', restore: false },
  { label: 'Never switch the code', restore: false, remember: 'never' },
];

export interface Store {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

/** Whether to restore the code; a dismissed question keeps the files as they are (false). */
export async function decide(
  setting: SwitchCode,
  store: Store,
  ask: (choices: Choice[]) => Thenable<Choice | undefined>,
): Promise<boolean> {
  if (setting !== 'ask') return setting === 'always';
  const saved = store.get<string>(MEMENTO_KEY);
  if (saved === 'always' || saved === 'never') return saved === 'always';
  const choice = await ask(CHOICES);
  if (!choice) return false;
  if (choice.remember) await store.update(MEMENTO_KEY, choice.remember);
  return choice.restore;
}

/** What a code switch did, in one sentence. */
export function describeSwitch(restored: string[], conflicts: string[] = []): string {
  let msg = restored.length
    ? `Switched the code to this branch (${restored.length} file${restored.length === 1 ? '' : 's'}).`
    : "The workspace already had this branch's code.";
  if (conflicts.length) msg += ` Kept ${conflicts.join(', ')} (changed by another program during the switch).`;
  return msg;
}
