/**
 * A code block's *Apply*: the user's own edit of a file with the block's text, never the
 * agent's. What it targets and replaces is decided here (pure, unit tested); the host shows the
 * result in VS Code's diff editor and applies it, after the user says so, as one undoable edit
 * (vscodeapi.applyCodeBlock).
 */

const PATH_LIKE = /^(?:[\w@.+-]+\/)*[\w@.+-]+\.[A-Za-z][\w+-]*$/;

/**
 * The file a code fence's info string names: `python src/app.py`, `python:src/app.py`,
 * `src/app.py`, or `python title="src/app.py"` / `path=src/app.py`. Only something shaped like a
 * relative or workspace path with an extension counts; the host still refuses one outside the
 * workspace.
 */
export function fencePath(info: string): string | undefined {
  const words = info.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return undefined;
  const candidates: string[] = [];
  const [first, ...rest] = words;
  const colon = first.indexOf(':');
  if (colon > 0) candidates.push(first.slice(colon + 1));
  candidates.push(first);
  for (const w of rest) {
    const kv = /^(?:path|file|filename|title)=["']?([^"']+)["']?$/.exec(w);
    candidates.push(kv ? kv[1] : w);
  }
  return candidates.find((c) => PATH_LIKE.test(c) && !c.startsWith('/') && !c.split('/').includes('..'));
}

/** A span of a document as offsets (start inclusive, end exclusive). */
export interface Span { start: number; end: number }

/** The document's text after the block's `code` replaces `span` (a selection), or all of it. */
export function appliedText(doc: string, code: string, span?: Span): string {
  if (!span || span.start === span.end) {
    // a whole file keeps the document's last-line convention
    const newline = doc.endsWith('\n') || doc === '';
    return code.endsWith('\n') || !newline ? code : `${code}\n`;
  }
  return doc.slice(0, span.start) + code + doc.slice(span.end);
}

/** What Apply will do, in words for its confirmation. */
export function applySummary(rel: string, span: { startLine: number; endLine: number } | undefined, creates: boolean): string {
  if (creates) return `Create ${rel} with the code block?`;
  if (span) {
    const lines = span.startLine === span.endLine ? `line ${span.startLine}` : `lines ${span.startLine}–${span.endLine}`;
    return `Replace the selection in ${rel} (${lines}) with the code block?`;
  }
  return `Replace the whole of ${rel} with the code block?`;
}
