/**
 * What the user points the agent at (context attachments, docs/protocol.md): the editor's
 * selection with its diagnostics, queued until the next message is sent. Pure logic: the
 * `vscode` side (active editor, `languages.getDiagnostics`) is in vscodeapi.ts.
 */

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

export interface DiagnosticItem {
  range: Range;
  message: string;
  severity?: number;
  source?: string;
  code?: string | number;
}

export interface ContextItem {
  kind: 'file' | 'selection' | 'diagnostics' | 'symbol';
  uri: string;
  range?: Range;
  text?: string;
  diagnostics?: DiagnosticItem[];
  name?: string;
}

/** A selection as the editor reports it: its document, range, text and the diagnostics it has. */
export interface EditorSelection {
  uri: string;
  /** Workspace-relative path for labels. */
  path: string;
  range: Range;
  text: string;
  diagnostics: DiagnosticItem[];
}

const overlaps = (a: Range, b: Range): boolean =>
  !(a.end.line < b.start.line || (a.end.line === b.start.line && a.end.character < b.start.character)
    || b.end.line < a.start.line || (b.end.line === a.start.line && b.end.character < a.start.character));

/** The attachments of a selection: the text, and the diagnostics that touch it (if any). */
export function selectionItems(sel: EditorSelection): ContextItem[] {
  const out: ContextItem[] = [{ kind: 'selection', uri: sel.uri, range: sel.range, text: sel.text }];
  const diags = sel.diagnostics.filter((d) => overlaps(d.range, sel.range));
  if (diags.length > 0) out.push({ kind: 'diagnostics', uri: sel.uri, range: sel.range, diagnostics: diags });
  return out;
}

/** `[selection src/app.py:3-5]`, as the transcript shows an attachment. */
export function label(item: ContextItem, path: string): string {
  let where = '';
  if (item.range && item.kind !== 'file') {
    const first = item.range.start.line + 1;
    let last = item.range.end.line + 1;
    if (item.range.end.character === 0 && last > first) last -= 1;
    where = first === last ? `:${first}` : `:${first}-${last}`;
  }
  const extra = item.kind === 'diagnostics' ? ` (${item.diagnostics?.length ?? 0})` : '';
  return `[${item.kind} ${path}${where}${extra}]`;
}

/** Attachments waiting for the next message. */
export class Attachments {
  private items: { item: ContextItem; label: string }[] = [];

  /** Queue a selection; returns the labels added. */
  addSelection(sel: EditorSelection): string[] {
    const added = selectionItems(sel).map((item) => ({ item, label: label(item, sel.path) }));
    this.items.push(...added);
    return added.map((a) => a.label);
  }

  /** Labels of what is queued. */
  labels(): string[] {
    return this.items.map((a) => a.label);
  }

  /** Drop one queued attachment by its position. */
  remove(index: number): void {
    this.items.splice(index, 1);
  }

  /** The queued attachments for a message being sent (the queue is emptied). */
  take(): ContextItem[] {
    const out = this.items.map((a) => a.item);
    this.items = [];
    return out;
  }
}
