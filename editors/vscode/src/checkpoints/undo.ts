/** Which turn `/undo` and *Undo This Turn* (without a node) undo: the server's truth. Pure. */
import type { Checkpoint, RestoreResult } from '../protocol';

/**
 * The newest turn checkpoint (the list is newest first) that changed files and that no undo
 * stands against (`undoneBy`, set by the server whichever editor or the CLI undid it).
 */
export function nextToUndo(checkpoints: readonly Checkpoint[]): Checkpoint | undefined {
  return checkpoints.find((c) => c.kind === 'turn' && c.files.length > 0 && !c.undoneBy);
}

/**
 * What a restore left as it was (files no checkpoint could record, something in the way), as a
 * sentence to append to its message; empty when it restored everything. Pure.
 */
export function notRestoredNote(res: Pick<RestoreResult, 'notRestored'>): string {
  const items = res.notRestored ?? [];
  if (items.length === 0) return '';
  return ` NOT restored, left as they are: ${items.map((i) => `${i.path} (${i.reason})`).join('; ')}.`;
}
