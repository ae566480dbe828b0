/** Branch labels that do not change as the conversation grows or other branches appear. */
import type { BranchInfo } from '../protocol';

function cut(text: string, n: number): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > n ? `${line.slice(0, n - 1)}…` : line;
}

/**
 * A branch's label: its name; else "main" for the first line; else where it forked (the time and
 * its first message), with a short id when two such labels would read the same. Never a
 * position number, which renumbers when branches are added.
 */
export function branchLabel(b: BranchInfo, all: BranchInfo[] = []): string {
  if (b.name) return b.name;
  if (!b.forkId) return 'main';
  const hm = /T(\d\d:\d\d)/.exec(b.startedAt ?? '')?.[1] ?? '?';
  const label = `fork ${hm}: ${cut(b.startPreview || b.preview || '', 40)}`;
  const twin = all.some((o) => o !== b && !o.name && o.forkId && o.forkId !== b.forkId && branchLabel(o) === label);
  return twin ? `${label} #${b.forkId.slice(-6)}` : label;
}

/** A session's name as a user sees it: its title, never its id (`s0mx…`). */
export function sessionTitle(s: { title?: string | null }): string {
  return s.title?.trim() || 'Untitled session';
}
