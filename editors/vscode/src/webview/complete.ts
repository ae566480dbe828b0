/** Which completion the chat input asks for at the cursor: `@file` anywhere, `/command` at the start. Pure. */
import type { CompletionKind } from './messages';

/** The word being completed: its kind, the query typed after `@` or `/`, and where it starts. */
export interface CompletionToken {
  kind: CompletionKind;
  query: string;
  /** Offset of the `@` or `/` in the text. */
  start: number;
}

/** The completion the text before the cursor asks for, if any. */
export function tokenAt(text: string, cursor: number): CompletionToken | null {
  const before = text.slice(0, cursor);
  const slash = /^\/([A-Za-z0-9_.:-]*)$/.exec(before);
  if (slash) return { kind: 'commands', query: slash[1], start: 0 };
  const at = /(^|\s)@([^\s@]*)$/.exec(before);
  if (at) return { kind: 'files', query: at[2], start: before.length - at[2].length - 1 };
  return null;
}

/** The text with the token replaced by `insert`, and where the cursor goes. */
export function applyCompletion(text: string, cursor: number, token: CompletionToken, insert: string): { text: string; cursor: number } {
  // the rest of a word the cursor was inside goes too (`@src/ap|p.py` → the picked path)
  let end = cursor;
  while (end < text.length && !/\s/.test(text[end])) end++;
  if (insert.endsWith(' ') && text[end] === ' ') end++; // no double space
  const out = text.slice(0, token.start) + insert + text.slice(end);
  return { text: out, cursor: token.start + insert.length };
}
