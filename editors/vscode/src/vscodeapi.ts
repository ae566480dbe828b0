/** The one module that touches the `vscode` runtime API; everything else imports from here. */
import * as vscode from 'vscode';
import { MAX_REFERENCES, flattenSymbols, referencesText, symbolAt, type RefLine } from './context/symbols';
import { USER_ONLY_KEYS } from './settings';
import { appliedText, applySummary } from './chat/apply';

export {
  CancellationTokenSource,
  CodeLens,
  Range,
  EventEmitter,
  MarkdownString,
  ThemeColor,
  ThemeIcon,
  TreeItem,
  TreeItemCollapsibleState,
  Uri,
} from 'vscode';
export type {
  CancellationToken,
  CodeLensProvider,
  Disposable,
  Event,
  ExtensionContext,
  LogOutputChannel,
  Memento,
  QuickPickItem,
  TextDocument,
  TextDocumentContentProvider,
  TreeDataProvider,
  TreeView,
  Webview,
  WebviewView,
  WebviewViewProvider,
  WebviewViewResolveContext,
} from 'vscode';

/** Register a command handler. */
export function registerCommand(id: string, fn: (...args: any[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(id, fn);
}

/** Run a command by id. */
export function executeCommand<T = unknown>(id: string, ...args: unknown[]): Thenable<T> {
  return vscode.commands.executeCommand<T>(id, ...args);
}

/** Set a `when`-clause context key. */
export function setContext(key: string, value: unknown): Thenable<unknown> {
  return vscode.commands.executeCommand('setContext', key, value);
}

/** Read one section of the user's settings. */
export function getConfiguration(section: string): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(section);
}

/** Fire when the settings change. */
export function onDidChangeConfiguration(
  fn: (e: vscode.ConfigurationChangeEvent) => unknown,
): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration(fn);
}

/** The first workspace folder's file system path, if any. */
export function workspaceFolderPath(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** Create the extension's log channel. */
export function createLogChannel(name: string): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel(name, { log: true });
}

/** Show an information notification with optional action buttons. */
export function showInfo(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(message, ...items);
}

/** Show a warning notification with optional action buttons. */
export function showWarning(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(message, ...items);
}

/** Show an error notification with optional action buttons. */
export function showError(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(message, ...items);
}

/** Ask for a line of text. */
export function showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined> {
  return vscode.window.showInputBox(options);
}

/** Let the user pick one item. */
export function showQuickPick<T extends vscode.QuickPickItem>(
  items: T[],
  options: vscode.QuickPickOptions,
): Thenable<T | undefined> {
  return vscode.window.showQuickPick(items, options);
}

/** Register the chat webview view. */
export function registerWebviewViewProvider(
  viewId: string,
  provider: vscode.WebviewViewProvider,
): vscode.Disposable {
  return vscode.window.registerWebviewViewProvider(viewId, provider, {
    webviewOptions: { retainContextWhenHidden: true },
  });
}

/** Create a tree view over a data provider. */
export function createTreeView<T>(
  viewId: string,
  provider: vscode.TreeDataProvider<T>,
): vscode.TreeView<T> {
  return vscode.window.createTreeView(viewId, { treeDataProvider: provider, showCollapseAll: true });
}

/** Serve read-only documents for a URI scheme. */
export function registerContentProvider(
  scheme: string,
  provider: vscode.TextDocumentContentProvider,
): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(scheme, provider);
}

/** Open VS Code's diff editor on two URIs. */
export function openDiff(left: vscode.Uri, right: vscode.Uri, title: string): Thenable<unknown> {
  return vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
}

/** Open VS Code's multi-file diff editor on (resource, left, right) triples. */
export function openChanges(title: string, resources: [vscode.Uri, vscode.Uri, vscode.Uri][]): Thenable<unknown> {
  return vscode.commands.executeCommand('vscode.changes', title, resources);
}

/**
 * Open a workspace file in an editor, or reveal a folder in the Explorer. A path that leads
 * outside the workspace (a model may name any) is refused.
 */
export async function openWorkspaceFile(relPath: string, line?: number): Promise<void> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const root = folders[0]?.uri;
  if (!root || !relPath) {
    return;
  }
  const within = (u: vscode.Uri) => folders.some((f) => u.scheme === f.uri.scheme
    && (u.path === f.uri.path || u.path.startsWith(f.uri.path.endsWith('/') ? f.uri.path : `${f.uri.path}/`)));
  // A path a reply wrote: absolute (inside a workspace folder) or relative to the first folder.
  let uri = vscode.Uri.joinPath(relPath.startsWith('/') ? root.with({ path: '/' }) : root, relPath); // `..` resolved
  if (!within(uri)) {
    void vscode.window.showWarningMessage(`OpenProgram: ${relPath} is outside the workspace; not opened.`);
    return;
  }
  let stat: vscode.FileStat | undefined;
  try {
    stat = await vscode.workspace.fs.stat(uri);
  } catch {
    // A bare name (`main.py` for src/main.py): the workspace's files of that name.
    const found = relPath.includes('/') ? [] : await vscode.workspace.findFiles(
      new vscode.RelativePattern(folders[0], `**/${relPath.replace(/[[\]{}*?!]/g, '?')}`), undefined, 50);
    const matches = found.filter((u) => within(u) && u.path.endsWith(`/${relPath}`));
    if (matches.length === 0) {
      void vscode.window.showInformationMessage(`OpenProgram: no file ${relPath} in the workspace.`);
      return;
    }
    const rel = (u: vscode.Uri) => vscode.workspace.asRelativePath(u, folders.length > 1);
    const pick = matches.length === 1 ? matches[0] : (await vscode.window.showQuickPick(
      matches.map((u) => ({ label: rel(u), uri: u })), { placeHolder: `Which ${relPath}?` }))?.uri;
    if (!pick) {
      return;
    }
    uri = pick;
    stat = await vscode.workspace.fs.stat(uri);
  }
  if (stat.type & vscode.FileType.Directory) {
    await vscode.commands.executeCommand('revealInExplorer', uri);
    return;
  }
  const doc = await vscode.workspace.openTextDocument(uri);
  const at = line !== undefined && Number.isInteger(line) && line > 0
    ? new vscode.Position(Math.min(line, doc.lineCount) - 1, 0) : undefined;
  await vscode.window.showTextDocument(doc, { preview: true, ...(at ? { selection: new vscode.Range(at, at) } : {}) });
}

const APPLY_SCHEME = 'openprogram-apply';
const proposals = new Map<string, string>();
let applyProvider: vscode.Disposable | undefined;

/**
 * A code block's Apply: the block's text replaces the selection of the file's editor, else the
 * whole file (`path` the fence named, else the active editor's file; a named file that does not
 * exist is created). The result is shown in the diff editor first and applied only when the
 * user confirms, as one edit of the document (unsaved, undone with Undo). A path outside the
 * workspace is refused.
 */
export async function applyCodeBlock(code: string, path?: string): Promise<void> {
  let uri: vscode.Uri | undefined;
  let creates = false;
  if (path !== undefined) {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const root = folders[0]?.uri;
    if (!root) return;
    uri = vscode.Uri.joinPath(root, path);
    const prefix = root.path.endsWith('/') ? root.path : `${root.path}/`;
    if (uri.scheme !== root.scheme || !uri.path.startsWith(prefix)) {
      void vscode.window.showWarningMessage(`OpenProgram: ${path} is outside the workspace; not applied.`);
      return;
    }
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      creates = true;
    }
  } else {
    uri = (vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0])?.document.uri;
    if (!uri) {
      void vscode.window.showInformationMessage('OpenProgram: open the file to apply the code to (or select the lines it replaces), then Apply again.');
      return;
    }
  }
  const rel = vscode.workspace.asRelativePath(uri, false);
  const doc = creates ? undefined : await vscode.workspace.openTextDocument(uri);
  const editor = doc && vscode.window.visibleTextEditors.find((e) => e.document === doc);
  const sel = editor && !editor.selection.isEmpty ? editor.selection : undefined;
  const before = doc?.getText() ?? '';
  const span = doc && sel ? { start: doc.offsetAt(sel.start), end: doc.offsetAt(sel.end) } : undefined;
  const after = appliedText(before, code, span);
  if (after === before) {
    void vscode.window.showInformationMessage(`OpenProgram: ${rel} already has this code.`);
    return;
  }
  applyProvider ??= vscode.workspace.registerTextDocumentContentProvider(APPLY_SCHEME, {
    provideTextDocumentContent: (u) => proposals.get(u.query) ?? '',
  });
  const key = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  proposals.set(key, after);
  const proposed = vscode.Uri.from({ scheme: APPLY_SCHEME, path: uri.path, query: key });
  const left = creates ? vscode.Uri.from({ scheme: APPLY_SCHEME, path: uri.path, query: 'empty' }) : uri;
  try {
    await vscode.commands.executeCommand('vscode.diff', left, proposed, `${rel} ↔ code block (Apply?)`, { preview: true });
    const what = applySummary(rel, sel ? { startLine: sel.start.line + 1, endLine: sel.end.line + 1 } : undefined, creates);
    const answer = await vscode.window.showInformationMessage(what,
      { modal: true, detail: 'The change is shown in the diff editor. It is your edit (not the agent\'s): Undo takes it back.' }, 'Apply');
    if (answer !== 'Apply') return;
    const edit = new vscode.WorkspaceEdit();
    if (creates) {
      edit.createFile(uri, { ignoreIfExists: true });
      edit.insert(uri, new vscode.Position(0, 0), after);
    } else if (doc) {
      edit.replace(uri, sel ?? new vscode.Range(doc.positionAt(0), doc.positionAt(before.length)), sel ? code : after);
    }
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showWarningMessage(`OpenProgram: could not apply the code to ${rel}.`);
      return;
    }
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
  } finally {
    proposals.delete(key);
    await closeDiffTabs((modified) => modified.toString() === proposed.toString());
  }
}

/** Close the diff editors whose right side `match`es. */
export async function closeDiffTabs(match: (modified: vscode.Uri) => boolean): Promise<void> {
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      if (tab.input instanceof vscode.TabInputTextDiff && match(tab.input.modified)) {
        await vscode.window.tabGroups.close(tab);
      }
    }
  }
}

/** Put text on the clipboard. */
export async function copyText(text: string): Promise<void> {
  await vscode.env.clipboard.writeText(text);
}

/**
 * Insert text at the cursor(s) of the active text editor, replacing its selections: one edit the
 * user undoes with Undo. No editor open: say so.
 */
export async function insertAtCursor(text: string): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    void vscode.window.showInformationMessage('OpenProgram: open a file to insert the code into.');
    return;
  }
  const done = await editor.edit((b) => { for (const sel of editor.selections) b.replace(sel, text); });
  if (!done) {
    void vscode.window.showWarningMessage(`OpenProgram: could not insert into ${vscode.workspace.asRelativePath(editor.document.uri)}.`);
    return;
  }
  await vscode.window.showTextDocument(editor.document, editor.viewColumn);
}

/** Open a web link from a message through VS Code's opener (http, https and mailto only). */
export async function openWebLink(url: string): Promise<void> {
  if (!/^(https?:|mailto:)/i.test(url.trim())) {
    return;
  }
  await vscode.env.openExternal(vscode.Uri.parse(url.trim(), true));
}

/** Show progress in the window's status bar while a promise runs. */
export function withWindowProgress<T>(title: string, task: () => Thenable<T>): Thenable<T> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title },
    () => task(),
  );
}

/** Show progress in a notification while a promise runs. */
export function withNotificationProgress<T>(title: string, task: () => Thenable<T>): Thenable<T> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () => task());
}

/** A status bar item on the right. */
export function createStatusBarItem(): vscode.StatusBarItem {
  return vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
}

/** The active editor's selection (the current line when nothing is selected) with the
 *  diagnostics of its document, as plain data; undefined without a text editor. */
/** Image files the user picks (an open dialog), read as base64. */
export async function pickImages(): Promise<import('./context/attachments').ImageRef[]> {
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: true, openLabel: 'Attach',
    filters: { Images: ['png', 'jpg', 'jpeg', 'gif', 'webp'] },
  });
  const out: import('./context/attachments').ImageRef[] = [];
  for (const uri of picked ?? []) {
    const bytes = await vscode.workspace.fs.readFile(uri);
    out.push({ uri: uri.toString(), name: uri.path.split('/').pop() || 'image', data: Buffer.from(bytes).toString('base64') });
  }
  return out;
}

export function activeSelection(): import('./context/attachments').EditorSelection | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  const doc = editor.document;
  let sel: vscode.Range = editor.selection;
  if (editor.selection.isEmpty) sel = doc.lineAt(editor.selection.active.line).rangeIncludingLineBreak;
  const pos = (p: vscode.Position) => ({ line: p.line, character: p.character });
  const range = { start: pos(sel.start), end: pos(sel.end) };
  const diagnostics = vscode.languages.getDiagnostics(doc.uri).map((d) => ({
    range: { start: pos(d.range.start), end: pos(d.range.end) },
    message: d.message,
    severity: d.severity + 1, // vscode counts from 0 (Error), LSP from 1
    source: d.source,
    code: typeof d.code === 'object' ? String(d.code.value) : d.code,
  }));
  return { uri: doc.uri.toString(), path: vscode.workspace.asRelativePath(doc.uri), range, text: doc.getText(sel), diagnostics };
}

/** The active editor's document symbols, as its language server gives them (`undefined`: no
 *  text editor is active), with the cursor and a way to read a range of the (unsaved) text. */
export async function activeDocumentSymbols(): Promise<{
  uri: string; path: string; cursor: { line: number; character: number }; symbols: unknown;
  text(range: import('./context/attachments').Range): string;
  /** Where the word under the cursor is defined (its whole declaration), when a server says. */
  definition?: import('./context/attachments').EditorSymbol;
  /** The references of the word under the cursor, listed (`path:line: code`). */
  references?: { target: import('./context/attachments').EditorSymbol; count: number; files: number };
} | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  const doc = editor.document;
  const at = editor.selection.active;
  const [symbols, definition, references] = await Promise.all([documentSymbols(doc.uri), definitionAt(doc, at), referencesAt(doc, at)]);
  return {
    uri: doc.uri.toString(),
    path: vscode.workspace.asRelativePath(doc.uri),
    cursor: { line: at.line, character: at.character },
    symbols,
    ...(definition ? { definition } : {}),
    ...(references ? { references } : {}),
    text: (r) => doc.getText(new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character)),
  };
}

/** A provider command's answer within `ms` (undefined: none, an error, or too late). */
async function within<T>(ms: number, run: () => Thenable<T>): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([Promise.resolve(run()), new Promise<undefined>((r) => { timer = setTimeout(() => r(undefined), ms); })]);
  } catch {
    return undefined;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

function documentSymbols(uri: vscode.Uri): Promise<unknown> {
  return within(5000, () => vscode.commands.executeCommand<unknown>('vscode.executeDocumentSymbolProvider', uri));
}

/** The references of the word at `pos` (the reference provider's), as a `path:line: code` list
 *  read from the documents (unsaved text included); at most MAX_REFERENCES of them are read. */
async function referencesAt(doc: vscode.TextDocument, pos: vscode.Position): Promise<{ target: import('./context/attachments').EditorSymbol; count: number; files: number } | undefined> {
  const word = doc.getWordRangeAtPosition(pos);
  if (!word) return undefined;
  const found = await within(5000, () => vscode.commands.executeCommand<vscode.Location[]>('vscode.executeReferenceProvider', doc.uri, pos));
  if (!Array.isArray(found) || found.length === 0) return undefined;
  const docs = new Map<string, vscode.TextDocument | null>();
  const refs: RefLine[] = [];
  for (const loc of found.slice(0, MAX_REFERENCES)) {
    const key = loc.uri.toString();
    if (!docs.has(key)) docs.set(key, await Promise.resolve(vscode.workspace.openTextDocument(loc.uri)).catch(() => null));
    const target = docs.get(key);
    const line = loc.range.start.line;
    refs.push({ path: vscode.workspace.asRelativePath(loc.uri), line, code: target && line < target.lineCount ? target.lineAt(line).text : '' });
  }
  const plain = (p: vscode.Position) => ({ line: p.line, character: p.character });
  const files = new Set(found.map((l) => l.uri.toString())).size;
  return {
    target: { uri: doc.uri.toString(), path: vscode.workspace.asRelativePath(doc.uri), name: doc.getText(word),
      range: { start: plain(word.start), end: plain(word.end) }, text: referencesText(refs, found.length) },
    count: found.length,
    files,
  };
}

/** Largest declaration text offered from another file. */
const MAX_DEFINITION = 100_000;

/** The declaration the word at `pos` refers to: the definition provider's first answer, widened
 *  to the document symbol holding it when the server gave only the name's range. */
async function definitionAt(doc: vscode.TextDocument, pos: vscode.Position): Promise<import('./context/attachments').EditorSymbol | undefined> {
  const word = doc.getWordRangeAtPosition(pos);
  if (!word) return undefined;
  const found = await within(5000, () => vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>('vscode.executeDefinitionProvider', doc.uri, pos));
  const first = Array.isArray(found) ? found[0] : undefined;
  if (!first) return undefined;
  const uri = 'targetUri' in first ? first.targetUri : first.uri;
  let range = 'targetUri' in first ? first.targetRange : first.range;
  if (!('targetUri' in first)) {
    const holding = symbolAt(flattenSymbols(await documentSymbols(uri)), range.start);
    if (holding) range = new vscode.Range(holding.range.start.line, holding.range.start.character, holding.range.end.line, holding.range.end.character);
  }
  let target: vscode.TextDocument;
  try {
    target = await vscode.workspace.openTextDocument(uri);
  } catch {
    return undefined;
  }
  const text = target.getText(range);
  if (text.length > MAX_DEFINITION) return undefined;
  const plain = (p: vscode.Position) => ({ line: p.line, character: p.character });
  return { uri: uri.toString(), path: vscode.workspace.asRelativePath(uri), name: doc.getText(word), range: { start: plain(range.start), end: plain(range.end) }, text };
}

/**
 * An error notification that stays until `close` (handed to `onClose`) is called or the user
 * dismisses it; unlike a plain message it can be taken back when it no longer holds.
 */
export function showNotice(message: string, onClose: (close: () => void) => void): void {
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: message, cancellable: true },
    (_progress, token) =>
      new Promise<void>((resolve) => {
        token.onCancellationRequested(() => resolve());
        onClose(resolve);
      }),
  );
}

/**
 * Change a setting where it takes effect: the workspace (folder) level when it is set there,
 * else the user's settings (always the user's for a user-only one: `USER_ONLY_KEYS`).
 */
export async function updateSetting(key: string, value: unknown): Promise<void> {
  const dot = key.indexOf('.');
  const cfg = vscode.workspace.getConfiguration(key.slice(0, dot));
  const name = key.slice(dot + 1);
  const where = cfg.inspect(name);
  const target = USER_ONLY_KEYS.includes(name) ? vscode.ConfigurationTarget.Global
    : where?.workspaceFolderValue !== undefined
    ? vscode.ConfigurationTarget.WorkspaceFolder
    : where?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await cfg.update(name, value, target);
}

/** Register a CodeLens provider for the documents of one URI scheme. */
export function registerCodeLens(scheme: string, provider: vscode.CodeLensProvider): vscode.Disposable {
  return vscode.languages.registerCodeLensProvider({ scheme }, provider);
}

/** The active editor's document and its cursor line (0-based), if there is one. */
export function activeCursor(): { uri: vscode.Uri; line: number } | undefined {
  const ed = vscode.window.activeTextEditor;
  return ed ? { uri: ed.document.uri, line: ed.selection.active.line } : undefined;
}

/** A modal yes/no question; true when the user chose `action`. */
export async function confirm(message: string, action: string): Promise<boolean> {
  return (await vscode.window.showWarningMessage(message, { modal: true }, action)) === action;
}

/** Let the user check several items (those `picked` start checked); undefined when dismissed. */
export function showQuickPickMany<T extends vscode.QuickPickItem>(items: T[], placeHolder: string): Thenable<T[] | undefined> {
  return vscode.window.showQuickPick(items, { canPickMany: true, placeHolder, ignoreFocusOut: true });
}

/** A modal question with several answers; the chosen one, undefined when dismissed. */
export async function askModal(message: string, detail: string, ...actions: string[]): Promise<string | undefined> {
  return vscode.window.showWarningMessage(message, { modal: true, detail }, ...actions);
}

/** A workspace file as it is now: its open editor's text when unsaved, else the disk's. */
export async function currentText(relPath: string): Promise<{ text: string | undefined; unsaved: boolean }> {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri;
  if (!root) return { text: undefined, unsaved: false };
  const uri = vscode.Uri.joinPath(root, relPath);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open?.isDirty) return { text: open.getText(), unsaved: true };
  try {
    return { text: new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)), unsaved: false };
  } catch {
    return { text: undefined, unsaved: false };
  }
}

/** The active text editor's file (a `file:` document of a workspace folder), as an attachment names it. */
export function activeFile(): import('./context/attachments').FileRef | null {
  const doc = vscode.window.activeTextEditor?.document;
  if (!doc || doc.uri.scheme !== 'file' || !vscode.workspace.getWorkspaceFolder(doc.uri)) return null;
  return { uri: doc.uri.toString(), path: vscode.workspace.asRelativePath(doc.uri), version: doc.version };
}

/** Fire when the active text editor changes, or its document's text. */
export function onDidChangeActiveEditor(fn: () => unknown): vscode.Disposable {
  const editors = vscode.window.onDidChangeActiveTextEditor(fn);
  const edits = vscode.workspace.onDidChangeTextDocument((e) => {
    if (e.document === vscode.window.activeTextEditor?.document && e.contentChanges.length > 0) fn();
  });
  return { dispose: () => { editors.dispose(); edits.dispose(); } };
}

/** VS Code's language features as `language.ts` uses them (diagnostics and providers). */
export function languageHost(): import('./language').LanguageHost {
  return {
    isOpen(uri: string): boolean {
      return vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri);
    },
    async open(uri: string): Promise<boolean> {
      try {
        await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
        return true;
      } catch {
        return false;
      }
    },
    diagnostics(uri: string) {
      return vscode.languages.getDiagnostics(vscode.Uri.parse(uri)).map((d) => ({
        range: d.range,
        message: d.message,
        severity: d.severity,
        source: d.source,
        code: d.code as string | number | { value: string | number } | undefined,
      }));
    },
    onDiagnostics(listener: (uris: string[]) => void) {
      return vscode.languages.onDidChangeDiagnostics((e) => listener(e.uris.map((u) => u.toString())));
    },
    provider(command, uri, position, query) {
      if (command === 'vscode.executeWorkspaceSymbolProvider') {
        return Promise.resolve(vscode.commands.executeCommand(command, query ?? ''));
      }
      const target = vscode.Uri.parse(uri ?? '');
      const args: unknown[] = [target];
      if (position) args.push(new vscode.Position(position.line, position.character));
      return Promise.resolve(vscode.commands.executeCommand(command, ...args));
    },
  };
}
