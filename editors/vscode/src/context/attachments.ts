/**
 * What the user points the agent at (context attachments, docs/protocol.md): the active file,
 * selections with their diagnostics, `@`-mentioned files and images (picked, pasted or dropped:
 * sent as base64, the server judges the bytes), queued until the next message is sent and shown
 * as removable chips (an image's with its thumbnail). Pure logic: the `vscode` side (active editor,
 * `languages.getDiagnostics`) is in vscodeapi.ts.
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
  kind: 'file' | 'selection' | 'diagnostics' | 'symbol' | 'references' | 'image';
  uri: string;
  range?: Range;
  text?: string;
  diagnostics?: DiagnosticItem[];
  name?: string;
  /** An image's bytes in base64. */
  data?: string;
  mediaType?: string;
}

/** An image the user picked, pasted or dropped. */
export interface ImageRef { uri: string; name: string; data: string; mediaType?: string }

/** Largest image the server takes (bytes). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** `12 KB`, `1.5 MB`. */
export function sizeText(n: number): string {
  return n >= 1048576 ? `${(n / 1048576).toFixed(1)} MB` : n >= 1024 ? `${Math.round(n / 1024)} KB` : `${n} B`;
}

/** The bytes a base64 text holds. */
export function base64Bytes(data: string): number {
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor(data.length * 3 / 4) - pad;
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

/** A symbol of an editor's document: its name, the range of its declaration and that text. */
export interface EditorSymbol {
  uri: string;
  /** Workspace-relative path for labels. */
  path: string;
  name: string;
  range: Range;
  text: string;
}

/** A file of the workspace: its uri and the path shown (and, for an editor's, its version). */
export interface FileRef { uri: string; path: string; version?: number }

/** One chip above the input: what will go with the next message. */
export interface Chip {
  id: string;
  kind: ContextItem['kind'];
  /** `src/app.py:3-5`, `src/app.py:3-5 (1)` for diagnostics. */
  label: string;
  /** The active editor's file: attached when the conversation has not seen this text of it. */
  active?: boolean;
  /** An image's thumbnail (a data: URL). */
  thumb?: string;
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

/** 1-based inclusive lines of a range (`3-5`, `4`); a range ending at column 0 ends a line before. */
export function lines(range: Range): string {
  const first = range.start.line + 1;
  let last = range.end.line + 1;
  if (range.end.character === 0 && last > first) last -= 1;
  return first === last ? `${first}` : `${first}-${last}`;
}

/** `src/app.py:3-5` (diagnostics add their count, a symbol its name), as a chip shows an attachment. */
export function where(item: Pick<ContextItem, 'kind' | 'range' | 'diagnostics' | 'name'>, path: string): string {
  const at = item.range && item.kind !== 'file' ? `:${lines(item.range)}` : '';
  const extra = item.kind === 'diagnostics' ? ` (${item.diagnostics?.length ?? 0})` : '';
  const name = (item.kind === 'symbol' || item.kind === 'references') && item.name ? `${item.name} · ` : '';
  return `${name}${path}${at}${extra}`;
}

/** `[selection src/app.py:3-5]`, as the transcript's notes name an attachment. */
export function label(item: ContextItem, path: string): string {
  return `[${item.kind} ${where(item, path)}]`;
}

const dataUrl = (item: ContextItem): string | undefined =>
  item.kind === 'image' && item.data ? `data:${item.mediaType || 'image/png'};base64,${item.data}` : undefined;

/** Attachments waiting for the next message, and the active editor's file. */
export class Attachments {
  private items: { id: string; item: ContextItem; label: string; path: string }[] = [];
  private next = 0;
  private active: FileRef | null = null;
  /** The active file the user removed: it stays off until another file becomes active. */
  private dismissed: string | null = null;
  /** The active file's text the conversation got last (`uri@version`): not sent again. */
  private sent: string | null = null;

  /** Queue a selection; returns the labels added. */
  addSelection(sel: EditorSelection): string[] {
    const added = selectionItems(sel).map((item) => ({ id: `a${++this.next}`, item, label: label(item, sel.path), path: sel.path }));
    this.items.push(...added);
    return added.map((a) => a.label);
  }

  /** Queue a symbol (its declaration's range and text, as the editor has them) or its references
   *  (`kind`; the text lists them); returns its label. */
  addSymbol(sym: EditorSymbol, kind: 'symbol' | 'references' = 'symbol'): string {
    const item: ContextItem = { kind, uri: sym.uri, range: sym.range, name: sym.name, text: sym.text };
    const text = label(item, sym.path);
    this.items.push({ id: `a${++this.next}`, item, label: text, path: sym.path });
    return text;
  }

  /** Queue a whole file (an `@`-mention); a file already queued is not queued twice. */
  addFile(file: FileRef): string {
    const item: ContextItem = { kind: 'file', uri: file.uri };
    const text = label(item, file.path);
    if (!this.items.some((a) => a.item.kind === 'file' && a.item.uri === file.uri)) {
      this.items.push({ id: `a${++this.next}`, item, label: text, path: file.path });
    }
    return text;
  }

  /** Queue an image; returns its label, or throws a one-line reason (too large). */
  addImage(image: ImageRef): string {
    const size = base64Bytes(image.data);
    if (size > MAX_IMAGE_BYTES) {
      throw new Error(`${image.name} is ${sizeText(size)}; images are limited to ${sizeText(MAX_IMAGE_BYTES)}`);
    }
    const item: ContextItem = { kind: 'image', uri: image.uri, name: image.name, data: image.data,
      ...(image.mediaType ? { mediaType: image.mediaType } : {}) };
    const path = `${image.name} (${sizeText(size)})`;
    const text = label(item, path);
    this.items.push({ id: `a${++this.next}`, item, label: text, path });
    return text;
  }

  /** The editor's active file changed (null: no file editor is active). */
  setActive(file: FileRef | null): void {
    if (file?.uri !== this.dismissed) this.dismissed = null;
    this.active = file;
  }

  /** A new conversation has seen no file: the active one goes with its first message. */
  newConversation(): void {
    this.sent = null;
  }

  /**
   * The file attached as the active one, if any: not removed, not queued already, and not the
   * very text the last message carried (an unchanged file is not sent with every message).
   */
  private activeFile(): FileRef | null {
    const a = this.active;
    if (!a || a.uri === this.dismissed || this.sent === `${a.uri}@${a.version ?? ''}`) return null;
    return this.items.some((q) => q.item.kind === 'file' && q.item.uri === a.uri) ? null : a;
  }

  /** The chips the input shows, in the order they are sent. */
  chips(): Chip[] {
    const a = this.activeFile();
    const activeChip: Chip[] = a ? [{ id: 'active', kind: 'file', label: a.path, active: true }] : [];
    return [...activeChip, ...this.items.map((q) => {
      const thumb = dataUrl(q.item);
      return { id: q.id, kind: q.item.kind, label: q.label.slice(q.item.kind.length + 2, -1), ...(thumb ? { thumb } : {}) };
    })];
  }

  /** Drop one chip; the active file's stays off until another file becomes active. */
  remove(id: string): void {
    if (id === 'active') {
      this.dismissed = this.active?.uri ?? null;
      return;
    }
    this.items = this.items.filter((q) => q.id !== id);
  }

  /** The attachments of a message being sent: the queue is emptied; the active file comes
   *  back when its text changes or another file becomes active. */
  take(): ContextItem[] {
    return this.takeShown().items;
  }

  /** Like take(), with each attachment as the transcript shows it. */
  takeShown(): { items: ContextItem[]; shown: SentAttachment[] } {
    const a = this.activeFile();
    if (a) this.sent = `${a.uri}@${a.version ?? ''}`;
    const all = [...(a ? [{ item: { kind: 'file', uri: a.uri } as ContextItem, path: a.path }] : []), ...this.items];
    this.items = [];
    return { items: all.map((q) => q.item), shown: all.map((q) => sentView(q.item, q.path)) };
  }
}

/** An attachment of a sent message, as the transcript shows it ("what the model saw"). */
export interface SentAttachment {
  kind: string;
  /** `src/app.py:3-5`. */
  label: string;
  /** The text the model was shown (history has it; a live message has a selection's). */
  text?: string;
  /** Read from an editor buffer with unsaved changes. */
  unsaved?: boolean;
  /** An image's thumbnail (a data: URL; a message sent from this panel). */
  thumb?: string;
  /** A stored image's hash: its thumbnail is fetched (`openprogram/image`). */
  sha256?: string;
}

/** A queued attachment as the transcript shows it once sent. */
export function sentView(item: ContextItem, path: string): SentAttachment {
  const thumb = dataUrl(item);
  return { kind: item.kind, label: where(item, path), ...(item.text !== undefined ? { text: item.text } : {}),
    ...(thumb ? { thumb } : {}) };
}

/** A stored attachment (`metadata.context` of a user node) as the transcript shows it. */
export function storedView(raw: unknown): SentAttachment | null {
  const r = raw as { kind?: unknown; path?: unknown; uri?: unknown; range?: Range; text?: unknown; unsaved?: unknown;
    diagnostics?: DiagnosticItem[]; name?: unknown } | null;
  if (!r || typeof r.kind !== 'string') return null;
  if (r.kind === 'image') {
    const img = raw as { name?: unknown; width?: unknown; height?: unknown; size?: unknown; path?: unknown; sha256?: unknown };
    const name = typeof img.name === 'string' ? img.name : typeof img.path === 'string' ? img.path : 'image';
    const dims = typeof img.width === 'number' && typeof img.height === 'number' ? ` ${img.width}x${img.height}` : '';
    const size = typeof img.size === 'number' ? ` ${sizeText(img.size)}` : '';
    const sha = typeof img.sha256 === 'string' && /^[0-9a-f]{64}$/.test(img.sha256) ? { sha256: img.sha256 } : {};
    return { kind: 'image', label: `${name}${dims}${size}`, ...sha };
  }
  const path = typeof r.path === 'string' ? r.path : typeof r.uri === 'string' ? r.uri : '';
  const kind = r.kind as ContextItem['kind'];
  const diags = Array.isArray(r.diagnostics) ? r.diagnostics : undefined;
  let text = typeof r.text === 'string' ? r.text : undefined;
  if (text === undefined && diags) {
    text = diags.map((d) => `${path}:${(d.range?.start?.line ?? 0) + 1}:${(d.range?.start?.character ?? 0) + 1}: ${d.message}`).join('\n');
  }
  return {
    kind,
    label: where({ kind, range: r.range, diagnostics: diags, ...(typeof r.name === 'string' ? { name: r.name } : {}) }, path),
    ...(text !== undefined ? { text } : {}),
    ...(r.unsaved === true ? { unsaved: true } : {}),
  };
}
