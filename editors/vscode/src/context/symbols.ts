/**
 * A symbol of the active document as an attachment: the document's language server gives the
 * symbols (`vscode.executeDocumentSymbolProvider`: `DocumentSymbol`s with children, or flat
 * `SymbolInformation`s); the declaration of the word under the cursor (the definition provider's
 * answer, in whatever file) is offered first, then its references (the reference provider's, a
 * `path:line: code` list), then the symbol holding the cursor (the innermost whose range holds
 * it), then the others. Pure logic: the `vscode` side is in vscodeapi.ts.
 */
import { lines, type EditorSymbol, type Position, type Range } from './attachments';

/** One symbol of a document, flattened (its container named). */
export interface DocSymbol {
  name: string;
  /** `vscode.SymbolKind` (0-based: 11 function, 4 class, ...). */
  kind: number;
  /** The whole declaration (what is attached). */
  range: Range;
  /** Its name (where the cursor usually is). */
  selectionRange: Range;
  container?: string;
  /** Nesting depth (0: top level). */
  depth: number;
}

/** Symbols read from one document; more is not offered. */
export const MAX_SYMBOLS = 2000;

const NAMES = ['file', 'module', 'namespace', 'package', 'class', 'method', 'property', 'field', 'constructor', 'enum',
  'interface', 'function', 'variable', 'constant', 'string', 'number', 'boolean', 'array', 'object', 'key', 'null',
  'enum member', 'struct', 'event', 'operator', 'type parameter'];

/** `function`, `class`, ... for a `vscode.SymbolKind`. */
export function kindName(kind: number): string {
  return NAMES[kind] ?? 'symbol';
}

type Loose = Record<string, unknown>;

function pos(p: unknown): Position | undefined {
  const o = p as Loose | null;
  return o && typeof o.line === 'number' && typeof o.character === 'number' ? { line: o.line, character: o.character } : undefined;
}

function rng(r: unknown): Range | undefined {
  const o = r as Loose | null;
  const start = pos(o?.start);
  const end = pos(o?.end);
  return start && end ? { start, end } : undefined;
}

/** The provider's answer, flattened in document order (children after their parent). */
export function flattenSymbols(list: unknown, container?: string, depth = 0, out: DocSymbol[] = []): DocSymbol[] {
  if (!Array.isArray(list)) return out;
  for (const raw of list) {
    if (out.length >= MAX_SYMBOLS) break;
    const s = raw as Loose | null;
    if (!s || typeof s.name !== 'string') continue;
    const range = rng(s.range) ?? rng((s.location as Loose | undefined)?.range);
    if (!range) continue;
    const containerName = typeof s.containerName === 'string' && s.containerName ? s.containerName : container;
    out.push({ name: s.name, kind: Number(s.kind) || 0, range, selectionRange: rng(s.selectionRange) ?? range,
      ...(containerName ? { container: containerName } : {}), depth });
    if (Array.isArray(s.children)) flattenSymbols(s.children, s.name, depth + 1, out);
  }
  return out;
}

const before = (a: Position, b: Position): boolean => a.line < b.line || (a.line === b.line && a.character <= b.character);

/** Whether `r` holds `p` (both ends included). */
export function holds(r: Range, p: Position): boolean {
  return before(r.start, p) && before(p, r.end);
}

/** The innermost symbol whose range holds the position (the smallest, on a tie the deepest). */
export function symbolAt(symbols: DocSymbol[], p: Position): DocSymbol | undefined {
  let best: DocSymbol | undefined;
  const size = (s: DocSymbol) => (s.range.end.line - s.range.start.line) * 1e6 + (s.range.end.character - s.range.start.character);
  for (const s of symbols) {
    if (!holds(s.range, p)) continue;
    if (!best || size(s) < size(best) || (size(s) === size(best) && s.depth > best.depth)) best = s;
  }
  return best;
}

/** The symbols as offered in the pick: the one under the cursor first, then document order. */
export function symbolChoices(symbols: DocSymbol[], cursor: Position | undefined): { symbol: DocSymbol; atCursor: boolean }[] {
  const at = cursor ? symbolAt(symbols, cursor) : undefined;
  return [...(at ? [{ symbol: at, atCursor: true }] : []), ...symbols.filter((s) => s !== at).map((symbol) => ({ symbol, atCursor: false }))];
}

/** One row of the symbol pick and what it attaches (a declaration, or the references of one). */
export interface SymbolPick {
  label: string;
  description: string;
  target: EditorSymbol;
  /** What the pick attaches (not `kind`: a quick pick item's own field). */
  attach: 'symbol' | 'references';
}

/** A reference as the definition and reference providers give it: a file and a 0-based line. */
export interface RefLine { path: string; line: number; code: string }

/** Most references listed in one attachment. */
export const MAX_REFERENCES = 200;

/** The text of a references attachment: `path:line: code` a line (1-based lines, in the given
 *  order, at most MAX_REFERENCES), then how many more of `total` there are. */
export function referencesText(refs: RefLine[], total = refs.length): string {
  const shown = refs.slice(0, MAX_REFERENCES).map((r) => `${r.path}:${r.line + 1}: ${r.code.trim().slice(0, 300)}`);
  if (total > shown.length) shown.push(`… and ${total - shown.length} more`);
  return shown.join('\n');
}

const same = (a: Range, b: Range): boolean =>
  a.start.line === b.start.line && a.start.character === b.start.character && a.end.line === b.end.line && a.end.character === b.end.character;

const icon = (kind: number): string => `$(symbol-${kindName(kind).replace(/ /g, '-')})`;

/**
 * The rows of the pick for a document (`text` reads a range of it): the definition of the word
 * under the cursor first (unless it is the very symbol holding the cursor), then the symbols.
 */
export function symbolPicks(doc: { uri: string; path: string; cursor: Position; symbols: unknown; definition?: EditorSymbol;
  references?: { target: EditorSymbol; count: number; files: number } }, text: (range: Range) => string): SymbolPick[] {
  const choices = symbolChoices(flattenSymbols(doc.symbols), doc.cursor);
  const out: SymbolPick[] = [];
  const def = doc.definition;
  const holding = choices[0]?.atCursor ? choices[0].symbol : undefined;
  if (def && !(def.uri === doc.uri && holding && same(def.range, holding.range))) {
    out.push({ label: `$(go-to-file) ${def.name}`, description: `definition of the word at the cursor · ${def.path}:${lines(def.range)}`, target: def, attach: 'symbol' });
  }
  const refs = doc.references;
  if (refs && refs.count > 0) {
    out.push({ label: `$(references) ${refs.target.name}`, attach: 'references', target: refs.target,
      description: `its references · ${refs.count} in ${refs.files} file${refs.files === 1 ? '' : 's'}` });
  }
  for (const c of choices) {
    out.push({
      label: `${icon(c.symbol.kind)} ${c.symbol.name}`,
      description: [c.atCursor ? 'at the cursor' : '', `${kindName(c.symbol.kind)}, lines ${lines(c.symbol.range)}`,
        c.symbol.container ? `in ${c.symbol.container}` : ''].filter(Boolean).join(' · '),
      target: { uri: doc.uri, path: doc.path, name: c.symbol.name, range: c.symbol.range, text: text(c.symbol.range) },
      attach: 'symbol',
    });
  }
  return out;
}
