/** Per-hunk review in the checkpoint diff: a CodeLens on each hunk restores just that hunk. */
import type { DiffHunk as Hunk } from '../protocol';
import type { CheckpointContentProvider } from './content';
import { CHECKPOINT_SCHEME, parseRef } from './uri';
import * as api from '../vscodeapi';

/** What `openprogram.restoreHunk` takes. */
export interface HunkRef {
  checkpointId: string;
  path: string;
  hunk: number;
}

/** The 0-based line a hunk's lens goes on, in the checkpoint's (after) text. */
export function hunkLine(h: Hunk): number {
  // A pure deletion has no lines after the turn: put the lens where the lines were.
  return Math.max(0, h.newLines === 0 ? h.newStart : h.newStart - 1);
}

/** The index of the hunk that covers 0-based `line` of the after text (or the nearest one). */
export function hunkAt(hunks: Hunk[], line: number): number {
  let best = -1;
  let dist = Number.POSITIVE_INFINITY;
  hunks.forEach((h, i) => {
    const start = hunkLine(h);
    const end = start + Math.max(h.newLines, 1) - 1;
    const d = line < start ? start - line : line > end ? line - end : 0;
    if (d < dist) {
      best = i;
      dist = d;
    }
  });
  return best;
}

/** Lenses on the after side of `openprogram-checkpoint:` documents. */
export class HunkLensProvider implements api.CodeLensProvider {
  constructor(private readonly content: CheckpointContentProvider) {}

  async provideCodeLenses(doc: api.TextDocument): Promise<api.CodeLens[]> {
    const ref = parseRef(doc.uri.path, doc.uri.query);
    if (!ref || ref.side !== 'after') return [];
    const result = await this.content.diff(ref.checkpointId, ref.path);
    const hunks = result.files.find((f) => f.path === ref.path)?.hunks ?? [];
    return hunks.map((h, i) => {
      const line = Math.min(hunkLine(h), Math.max(doc.lineCount - 1, 0));
      const args: HunkRef = { checkpointId: ref.checkpointId, path: ref.path, hunk: i };
      const lines = h.oldLines === 0 ? 'remove these lines' : h.newLines === 0 ? `put back ${h.oldLines} line${h.oldLines === 1 ? '' : 's'}` : 'as before the turn';
      return new api.CodeLens(new api.Range(line, 0, line, 0), {
        title: `$(discard) Restore this hunk (${lines})`,
        tooltip: 'Undo this change in the file as it is now, leaving its other changes alone (undoable)',
        command: 'openprogram.restoreHunk',
        arguments: [args],
      });
    });
  }
}

/** The hunk under the cursor of the active checkpoint diff, for the command without arguments. */
export async function hunkUnderCursor(content: CheckpointContentProvider): Promise<HunkRef | undefined> {
  const at = api.activeCursor();
  if (!at || at.uri.scheme !== CHECKPOINT_SCHEME) return undefined;
  const ref = parseRef(at.uri.path, at.uri.query);
  if (!ref || ref.side !== 'after') return undefined;
  const result = await content.diff(ref.checkpointId, ref.path);
  const hunks = result.files.find((f) => f.path === ref.path)?.hunks ?? [];
  const hunk = hunkAt(hunks, at.line);
  return hunk < 0 ? undefined : { checkpointId: ref.checkpointId, path: ref.path, hunk };
}
