/**
 * Per-hunk review of a pending edit (pure; the diff editor around it is review.ts). The hunks are
 * the server's (`toolCall.diff.hunks`, computed from exactly the card's texts), never computed
 * here: the answer names them by index, and the right side of the diff shows what the server will
 * write, the old text with only the accepted hunks applied (as the server's `apply_some`).
 */
import type { PreviewHunk } from '../wire';

/** Lines with their endings kept; only `\n` ends a line (as the server splits them). */
export function splitLines(text: string): string[] {
  const parts = text.split('\n');
  const out = parts.slice(0, -1).map((p) => `${p}\n`);
  if (parts[parts.length - 1]) out.push(parts[parts.length - 1]);
  return out;
}

/** A hunk's 0-based line slices: old `i1..i2`, new `j1..j2` (a pure insertion has i1 == i2). */
export function slices(h: PreviewHunk): { i1: number; i2: number; j1: number; j2: number } {
  const i1 = h.oldLines > 0 ? h.oldStart - 1 : h.oldStart;
  const j1 = h.newLines > 0 ? h.newStart - 1 : h.newStart;
  return { i1, i2: i1 + h.oldLines, j1, j2: j1 + h.newLines };
}

/** Where a hunk sits in the reviewed text: its first line (0-based) and how many lines it has. */
export interface PlacedHunk { index: number; line: number; lines: number; accepted: boolean }

/** The text written with only `accepted` hunks applied, and where each hunk lands in it. */
export function compose(oldText: string, newText: string, hunks: PreviewHunk[], accepted: ReadonlySet<number>):
  { text: string; placed: PlacedHunk[] } {
  const old = splitLines(oldText);
  const neu = splitLines(newText);
  const out: string[] = [];
  const placed: PlacedHunk[] = [];
  let at = 0;
  for (const h of [...hunks].sort((a, b) => a.index - b.index)) {
    const { i1, i2, j1, j2 } = slices(h);
    out.push(...old.slice(at, i1));
    const take = accepted.has(h.index) ? neu.slice(j1, j2) : old.slice(i1, i2);
    placed.push({ index: h.index, line: out.length, lines: take.length, accepted: accepted.has(h.index) });
    out.push(...take);
    at = i2;
  }
  out.push(...old.slice(at));
  return { text: out.join(''), placed };
}

/** The approval answer for the review's decisions: the whole edit, some hunks, or a rejection. */
export function reviewAnswer(hunks: PreviewHunk[], accepted: ReadonlySet<number>):
  { kind: 'allow_once'; acceptedHunks?: number[] } | { kind: 'reject_once' } {
  const chosen = hunks.map((h) => h.index).filter((i) => accepted.has(i)).sort((a, b) => a - b);
  if (chosen.length === 0) return { kind: 'reject_once' };
  return chosen.length === hunks.length ? { kind: 'allow_once' } : { kind: 'allow_once', acceptedHunks: chosen };
}

/** What the card says once answered by hunk: "Allowed once: 2 of 3 hunks (1, 3)". */
export function hunksLabel(accepted: number[], total: number): string {
  return `${accepted.length} of ${total} hunk${total === 1 ? '' : 's'} (${accepted.map((i) => i + 1).join(', ')})`;
}
