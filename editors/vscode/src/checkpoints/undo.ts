/** Which turn `/undo` and *Undo This Turn* (without a node) undo: the server's truth. Pure. */
import type { Checkpoint } from '../protocol';

/**
 * The newest turn checkpoint (the list is newest first) that changed files and that no undo
 * stands against (`undoneBy`, set by the server whichever editor or the CLI undid it).
 */
export function nextToUndo(checkpoints: readonly Checkpoint[]): Checkpoint | undefined {
  return checkpoints.find((c) => c.kind === 'turn' && c.files.length > 0 && !c.undoneBy);
}
