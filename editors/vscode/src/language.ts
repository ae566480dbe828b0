/**
 * Answers `openprogram/diagnostics` and `openprogram/navigate` from VS Code's language features:
 * `languages.getDiagnostics` (waiting for them to settle, bounded) and the
 * `vscode.execute*Provider` commands. The vscode calls go through a `LanguageHost`
 * (`vscodeapi.languageHost`), so the waiting and the conversions here are plain code.
 */
import type * as wire from './wire';

/** A position or range as VS Code has them (0-based line, UTF-16 character). */
export interface HostPosition {
  line: number;
  character: number;
}
export interface HostRange {
  start: HostPosition;
  end: HostPosition;
}

/** A `vscode.Diagnostic` (severity 0 error … 3 hint). */
export interface HostDiagnostic {
  range: HostRange;
  message: string;
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
}

/** What answering needs of VS Code. */
export interface LanguageHost {
  /** Whether a document of the uri is open already (its servers have seen it). */
  isOpen(uri: string): boolean;
  /** Open the document (so its language servers see it); false when it cannot be opened. */
  open(uri: string): Promise<boolean>;
  diagnostics(uri: string): readonly HostDiagnostic[];
  /** Calls `listener` with the uris whose diagnostics changed. */
  onDiagnostics(listener: (uris: string[]) => void): { dispose(): void };
  /** Run `vscode.execute<command>Provider` on the document at the position (or the query). */
  provider(command: string, uri: string | undefined, position: HostPosition | undefined, query: string | undefined): Promise<unknown>;
}

const MAX_ITEMS = 500;
const MAX_MESSAGE = 2000;
const MAX = 1000;
const MAX_HOVER = 100_000;
/** Our own diagnostics (the openprogram server's), left out. */
const OWN_SOURCE = 'openprogram';

function range(r: HostRange | undefined): wire.WireRange {
  const start = r?.start ?? { line: 0, character: 0 };
  const end = r?.end ?? start;
  return { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } };
}

function item(d: HostDiagnostic): wire.DiagnosticItem {
  const raw = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  return {
    range: range(d.range),
    message: String(d.message ?? '').slice(0, MAX_MESSAGE),
    severity: Math.min(4, Math.max(1, (d.severity ?? 0) + 1)),
    ...(d.source ? { source: d.source.slice(0, 200) } : {}),
    ...(raw !== undefined ? { code: raw } : {}),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `openprogram/diagnostics`: each file's diagnostics once they settle (bounded). */
export async function answerDiagnostics(host: LanguageHost, params: wire.DiagnosticsParams): Promise<wire.DiagnosticsResponse> {
  const settle = Math.max(0, Math.min(Number(params.settleMs) || 0, 5000));
  const timeout = Math.max(0, Math.min(Number(params.timeoutMs) || 1500, 10_000));
  const start = Date.now();
  const changed = new Map<string, number>();
  const sub = host.onDiagnostics((uris) => {
    for (const u of uris) changed.set(u, Date.now());
  });
  try {
    const uris = (Array.isArray(params.uris) ? params.uris : []).filter((u) => typeof u === 'string' && u.startsWith('file:'));
    const wait = new Map<string, number>();
    const opened: string[] = [];
    for (const uri of uris) {
      const wasOpen = host.isOpen(uri);
      if (!(await host.open(uri))) continue;
      opened.push(uri);
      // a document just opened waits for its servers even when asked not to settle
      if (settle > 0 || !wasOpen) wait.set(uri, Math.max(settle, wasOpen ? 0 : 300));
    }
    while (Date.now() - start < timeout) {
      const now = Date.now();
      let done = true;
      for (const [uri, quiet] of wait) {
        const at = changed.get(uri);
        if (at === undefined || now - at < quiet) done = false;
      }
      if (done) break;
      await sleep(20);
    }
    return {
      files: opened.map((uri) => ({
        uri,
        diagnostics: host.diagnostics(uri).filter((d) => d.source !== OWN_SOURCE).slice(0, MAX_ITEMS).map(item),
      })),
    };
  } finally {
    sub.dispose();
  }
}

const COMMANDS: Record<wire.NavigateParams['kind'], string> = {
  definition: 'vscode.executeDefinitionProvider',
  references: 'vscode.executeReferenceProvider',
  hover: 'vscode.executeHoverProvider',
  documentSymbols: 'vscode.executeDocumentSymbolProvider',
  workspaceSymbols: 'vscode.executeWorkspaceSymbolProvider',
};

type Loose = Record<string, any>;

function uriText(u: unknown): string | undefined {
  if (typeof u === 'string') return u;
  if (u && typeof (u as Loose).toString === 'function') return String((u as Loose).toString());
  return undefined;
}

function hoverText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map(hoverText).filter((s) => s).join('\n\n');
  if (c && typeof c === 'object' && 'value' in (c as Loose)) return String((c as Loose).value);
  return '';
}

function symbols(list: Loose[], uri: string | undefined, container: string | undefined, out: wire.NavSymbol[]): void {
  for (const s of list) {
    if (out.length >= MAX || !s || typeof s !== 'object') return;
    const loc = (s.location ?? {}) as Loose;
    out.push({
      name: String(s.name ?? '?').slice(0, 1000),
      kind: Math.min(26, Math.max(1, (Number(s.kind) || 0) + 1)), // vscode.SymbolKind is 0-based
      uri: uriText(loc.uri) ?? uri ?? null,
      range: range((s.selectionRange ?? s.range ?? loc.range) as HostRange),
      container: (s.containerName as string | undefined) || container || null,
    });
    if (Array.isArray(s.children)) symbols(s.children as Loose[], uri, String(s.name), out);
  }
}

/** `openprogram/navigate`: the language features' answer, flattened and bounded. */
export async function answerNavigate(host: LanguageHost, params: wire.NavigateParams): Promise<wire.NavigateResponse> {
  const command = COMMANDS[params.kind];
  const out: wire.NavigateResponse = { locations: [], symbols: [] };
  if (!command) return out;
  const ms = Math.max(100, Math.min(Number(params.timeoutMs) || 5000, 30_000));
  if (params.kind !== 'workspaceSymbols') {
    if (!params.uri || !(await host.open(params.uri))) return out;
  }
  const position = params.position ? { line: Number(params.position.line) || 0, character: Number(params.position.character) || 0 } : undefined;
  const timer = new Promise<undefined>((r) => setTimeout(() => r(undefined), ms));
  let result: unknown;
  try {
    result = await Promise.race([host.provider(command, params.uri, position, params.query ?? ''), timer]);
  } catch {
    result = undefined;
  }
  const list = Array.isArray(result) ? (result as Loose[]) : result ? [result as Loose] : [];
  if (params.kind === 'definition' || params.kind === 'references') {
    for (const l of list) {
      if (out.locations!.length >= MAX) break;
      const uri = uriText(l.targetUri ?? l.uri);
      if (uri) out.locations!.push({ uri, range: range((l.targetSelectionRange ?? l.targetRange ?? l.range) as HostRange) });
    }
  } else if (params.kind === 'hover') {
    const text = list.map((h) => hoverText(h.contents)).filter((s) => s).join('\n\n');
    if (text) out.hover = text.slice(0, MAX_HOVER);
  } else {
    symbols(list, params.uri, undefined, out.symbols!);
  }
  return out;
}
