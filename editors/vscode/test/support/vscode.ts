// A stand-in for the `vscode` module so host logic runs under node's test runner.
// Notifications are answered by `responder`, which a test sets to play the user.

type Listener<T> = (value: T) => unknown;

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (listener: Listener<T>): { dispose(): void } => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(value: T): void {
    for (const l of [...this.listeners]) l(value);
  }
  dispose(): void {
    this.listeners = [];
  }
}

/** vscode.Memento (globalState / workspaceState) in memory. */
export class Memento {
  private data = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.data.keys()];
  }
  get<T>(key: string, dflt?: T): T | undefined {
    return (this.data.has(key) ? this.data.get(key) : dflt) as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.data.delete(key);
    else this.data.set(key, value);
    return Promise.resolve();
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  token = {
    isCancellationRequested: false,
    onCancellationRequested: (l: () => unknown) => this.emitter.event(l),
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class TreeItem {
  constructor(public label: string, public collapsibleState?: number) {}
}
export const TreeItemCollapsibleState = { None: 0, Collapsed: 1, Expanded: 2 };
export class ThemeIcon {
  constructor(public id: string) {}
}
export class ThemeColor {
  constructor(public id: string) {}
}
export class MarkdownString {
  constructor(public value = '') {}
}
export const Uri = {
  from: (c: { scheme: string; path: string; query?: string }) => c,
  joinPath: (base: { path: string }, ...parts: string[]) => ({ ...base, path: [base.path, ...parts].join('/') }),
};
export const ProgressLocation = { Window: 10 };
export const ConfigurationTarget = { Global: 1, Workspace: 2, WorkspaceFolder: 3 };
export const StatusBarAlignment = { Left: 1, Right: 2 };

/** What the user does with a notification: the test decides. */
export const ui = {
  responder: (_kind: 'info' | 'warning' | 'error' | 'input', _message: string, _items: string[]): Promise<string | undefined> =>
    Promise.resolve(undefined),
  shown: [] as { kind: string; message: string; items: string[] }[],
  contexts: new Map<string, unknown>(),
  /** Commands run through executeCommand (besides setContext), with their arguments. */
  executed: [] as { id: string; args: unknown[] }[],
  /** What a command returns when run (the test plays the extension's handlers). */
  commandResults: new Map<string, unknown>(),
  /** Command ids registered with registerCommand, in order. */
  registered: [] as string[],
  /** Commands carried out when run (as the extension's handler would), with what they return. */
  commandHandlers: new Map<string, (...args: any[]) => unknown>(),
  /** Settings written with update(): `section.name` → value. */
  settings: new Map<string, unknown>(),
};

function notify(kind: 'info' | 'warning' | 'error') {
  return (message: string, ...items: string[]): Promise<string | undefined> => {
    ui.shown.push({ kind, message, items });
    return ui.responder(kind, message, items);
  };
}

export const window = {
  showInformationMessage: notify('info'),
  showWarningMessage: notify('warning'),
  showErrorMessage: notify('error'),
  showInputBox: (o: { prompt?: string }) => ui.responder('input', o.prompt ?? '', []),
  showQuickPick: () => Promise.resolve(undefined),
  withProgress: (_o: unknown, task: () => unknown) => task(),
  tabGroups: { all: [] as { tabs: { input: unknown }[] }[], close: () => Promise.resolve(true) },
};
export class TabInputTextDiff {
  constructor(public original: unknown, public modified: unknown) {}
}

export const commands = {
  registerCommand: (id: string) => {
    ui.registered.push(id);
    return { dispose() {} };
  },
  executeCommand: (id: string, ...args: unknown[]) => {
    if (id === 'setContext') ui.contexts.set(String(args[0]), args[1]);
    else ui.executed.push({ id, args });
    const handler = ui.commandHandlers.get(id);
    return Promise.resolve(handler ? handler(...args) : ui.commandResults.get(id));
  },
};

export const workspace = {
  workspaceFolders: undefined as { uri: { scheme: string; path: string } }[] | undefined,
  textDocuments: [] as { uri: unknown; isDirty: boolean; getText(): string }[],
  fs: { readFile: async (uri: { path: string }) => (await import('node:fs/promises')).readFile(uri.path) },
  getConfiguration: (section = '') => ({
    get: () => undefined,
    inspect: () => undefined,
    update: (name: string, value: unknown) => {
      ui.settings.set(section ? `${section}.${name}` : name, value);
      return Promise.resolve();
    },
  }),
  onDidChangeConfiguration: () => ({ dispose() {} }),
};
