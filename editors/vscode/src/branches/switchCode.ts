/** Whether a branch switch also switches the workspace's code: the setting, else the answer
 * remembered in global state, else ask once (the answer may be remembered). No `vscode` here. */
import type { SwitchCode } from '../settings';
import type { DiffFile } from '../wire';

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

/** What the workspace holds of a file now: its unsaved editor's text, else the disk's
 * (undefined: no such file). */
export interface Current { text: string | undefined; unsaved: boolean }

/**
 * The files a code switch would replace that hold the user's own changes: an unsaved editor, or a
 * text other than the code state being left (`files` of branchDiff from the shown branch to the
 * target: `before` is the state left, `after` the one written; a file that already holds
 * `after` loses nothing). Binary and oversized files carry no text to compare and
 * are not listed (the safety checkpoint keeps them either way).
 */
export function ownChanges(files: DiffFile[], current: (path: string) => Current): string[] {
  const out: string[] = [];
  for (const f of files) {
    if (f.binary || f.truncated) continue;
    const now = current(f.path);
    const left = f.status === 'added' ? undefined : f.before;
    const target = f.status === 'deleted' ? undefined : f.after;
    if ((f.status !== 'added' && left === undefined) || (f.status !== 'deleted' && target === undefined)) continue;
    if (now.unsaved) out.push(`${f.path} (unsaved)`);
    // the text of neither branch (what the switch writes already there: nothing is lost)
    else if (now.text !== left && now.text !== target) out.push(f.path);
  }
  return out;
}

/** The question before a switch that would replace them. */
export function ownChangesQuestion(files: string[]): { message: string; detail: string } {
  const list = files.length <= 6 ? files.join(', ') : `${files.slice(0, 6).join(', ')} and ${files.length - 6} more`;
  return {
    message: `Your own changes to ${files.length === 1 ? 'a file' : `${files.length} files`} would be replaced by the branch's code: ${list}.`,
    detail: 'Switch them too: the safety checkpoint keeps your versions and Undo brings them back (an unsaved editor keeps its text; saving it asks). '
      + "Keep my changes: these files stay as they are, the rest of the workspace gets the branch's code. "
      + 'Choose files: decide file by file.',
  };
}

/** The workspace path of an own-change label (`ownChanges` marks unsaved editors). */
export function ownPath(label: string): string {
  return label.endsWith(' (unsaved)') ? label.slice(0, -' (unsaved)'.length) : label;
}

/** What a switch that kept the user's own changes says it did. */
export function keptNote(kept: string[]): string {
  return `Kept your own changes to ${kept.join(', ')}; the rest of the workspace has the branch's code.`;
}
