/** Owns the LanguageClient: start, serialised restarts, the openprogram capability and handlers. */
import type { ClientCapabilities, FeatureState, StaticFeature } from 'vscode-languageclient';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import {
  EXPERIMENTAL_CAPABILITY,
  ServerNotifications,
  ServerRequests,
  type EventParams,
  type PermissionOutcome,
  type PermissionParams,
  type QuestionOutcome,
  type QuestionParams,
} from './protocol';
import * as net from 'node:net';
import { readAttachment, stateHome } from './connect';
import { exitDetail, spawnServer, type ServerProcess } from './process';
import { attachOrStart, endKept, fingerprint, keepable, keptDir, pidAlive, removeRecord, type Kept } from './kept';
import * as path from 'node:path';
import { findServer, installServer, installSource, installSteps, offerInstall, SERVER_NAME } from './install';
import * as os from 'node:os';
import { expand, launchPlan, parseSettings, userOnly, type Settings } from './settings';
import { traceError, traceInfo } from './log';
import * as api from './vscodeapi';
import { answerDiagnostics, answerNavigate } from './language';
import type * as wire from './wire';

export type ServerState = 'starting' | 'running' | 'stopped';
export type PermissionHandler = (p: PermissionParams, token: api.CancellationToken) => Promise<PermissionOutcome>;
export type QuestionHandler = (p: QuestionParams, token: api.CancellationToken) => Promise<QuestionOutcome>;

/** Connect to a server on 127.0.0.1:`port` (a kept server, or `serve --tcp` the user runs). */
function loopback(port: number): ServerOptions {
  return () =>
    new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => resolve({ reader: socket, writer: socket }));
      socket.once('error', reject);
    });
}

/** Declares `experimental.openprogram` so the server sends permission and question requests. */
class OpenProgramFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, openprogram: { ...EXPERIMENTAL_CAPABILITY } };
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: 'static' };
  }
  clear(): void {}
}

/** Read and validate the `openprogram.*` settings. */
export function readSettings(): { settings: Settings; problems: string[] } {
  // A server command, MCP server, permission mode, base URL or key command from a workspace's
  // settings could run code or widen the agent's power: only the user's own value counts.
  return parseSettings(userOnly(api.getConfiguration('openprogram')));
}

/** What the chat, trees and commands need from a connection to the server. */
export interface AgentPort {
  request<R>(method: string, params: unknown, token?: api.CancellationToken): Promise<R>;
  readonly onEvent: api.Event<EventParams>;
  readonly onState: api.Event<{ state: ServerState; detail?: string }>;
  permissionHandler: PermissionHandler | undefined;
  questionHandler: QuestionHandler | undefined;
}

/** The language client and everything that lives and dies with it. */
export class AgentClient implements AgentPort {
  private client: LanguageClient | undefined;
  private server: ServerProcess | undefined;
  /** The kept server this window is attached to (it outlives the window: a reload re-attaches). */
  private kept: Kept | undefined;
  /** Where the kept server's record is (its workspace's folder in the global storage). */
  private keptAt: string | undefined;
  /** How the current server process ended, once it has. */
  private ended: string | undefined;
  /** Settles when the current server process has exited. */
  private exited: Promise<void> = Promise.resolve();
  /** The last failure shown as a notification; the same one is not shown twice in a row. */
  private lastToast: string | null = null;
  private closeNotice: (() => void) | undefined;
  private listeners: api.Disposable[] = [];
  private restartPromise: Promise<void> | null = null;
  private restartQueued = false;
  private readonly events = new api.EventEmitter<EventParams>();
  private readonly states = new api.EventEmitter<{ state: ServerState; detail?: string }>();
  /** Fires for every `openprogram/event` notification. */
  readonly onEvent = this.events.event;
  /** Fires when the server starts, stops or fails. */
  readonly onState = this.states.event;
  permissionHandler: PermissionHandler | undefined;
  questionHandler: QuestionHandler | undefined;
  state: ServerState = 'stopped';

  /** The running server's version (its serverInfo), once it runs. */
  serverVersion: string | undefined;
  /** Whether the install offer is on screen (it is not shown twice). */
  private offering = false;

  constructor(
    private readonly output: api.LogOutputChannel,
    private readonly trace: api.LogOutputChannel,
    /** The extension's version, folder and global storage (where it installs the server and
     * records each workspace's kept server). */
    private readonly host: { version: string; extensionDir: string; storageDir: string } = { version: '', extensionDir: '', storageDir: '' },
  ) {}

  /** (Re)start the server; concurrent calls coalesce into at most one queued restart. */
  restart(): Promise<void> {
    if (this.restartPromise) {
      this.restartQueued = true;
      return this.restartPromise;
    }
    this.restartPromise = (async () => {
      try {
        do {
          this.restartQueued = false;
          await this.runServer();
        } while (this.restartQueued);
      } finally {
        this.restartPromise = null;
      }
    })();
    return this.restartPromise;
  }

  /** Wait for a running server; throws when it is not running. */
  async ready(): Promise<LanguageClient> {
    if (this.restartPromise) {
      await this.restartPromise;
    }
    if (!this.client || this.client.state !== State.Running) {
      throw new Error('The OpenProgram server is not running. Run "OpenProgram: Restart Server" or check the log.');
    }
    return this.client;
  }

  /** Send a custom request once the server is ready. */
  async request<R>(method: string, params: unknown, token?: api.CancellationToken): Promise<R> {
    const client = await this.ready();
    // An explicit undefined token would count as a second parameter and turn params into a list.
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  /**
   * Stop the server and drop its listeners. A kept server is ended too, unless `keep` (the
   * window goes: its turns run on for the reloaded window to re-attach to).
   */
  async stop(keep = false): Promise<void> {
    const old = this.client;
    this.client = undefined;
    for (const d of this.listeners.splice(0)) {
      d.dispose();
    }
    if (old) {
      // A client whose start failed throws on stop and dispose ("Client is not running"):
      // that must not keep a fixed setting from starting the next one.
      if (old.state !== State.Stopped) {
        try {
          await old.stop(5000);
        } catch (err) {
          traceError('stopping the server:', err);
        }
      }
      try {
        await old.dispose();
      } catch (err) {
        traceError('disposing the old client:', err);
      }
    }
    const kept = this.kept;
    this.kept = undefined;
    if (kept && !keep) {
      // Restart Server, a setting that needs a new server: SIGTERM lets it record its turns
      // interrupted, then its group goes
      await endKept(kept.pid);
      if (this.keptAt) removeRecord(path.join(this.keptAt, 'server.json'), kept.pid);
    } else if (!kept) {
      // Whatever the server left behind in its process group (commands, MCP servers) goes too.
      this.server?.killGroup();
    }
    this.server = undefined;
    this.setState('stopped');
  }

  /** Release everything; a kept server stays for the reloaded window (it exits when idle). */
  async dispose(): Promise<void> {
    await this.stop(true);
    this.events.dispose();
    this.states.dispose();
  }

  private setState(state: ServerState, detail?: string): void {
    this.state = state;
    this.states.fire({ state, detail });
  }

  private async runServer(): Promise<void> {
    await this.stop();
    const { settings, problems } = readSettings();
    for (const p of problems) {
      void api.showWarning(`OpenProgram: ${p}; using the default.`);
    }
    const folder = api.workspaceFolderPath();
    const plan = launchPlan(settings, folder, process.env);
    traceInfo(`starting ${plan.command} ${plan.args.join(' ')} (model ${settings.model || 'server default'})`);
    let serverOptions: ServerOptions;
    if (settings.connect) {
      // attach to a running `serve --tcp`: its run file gives the port and the token
      const home = stateHome(settings.home ? expand(settings.home, folder, process.env) : '', process.env);
      let att: { port: number; token: string };
      try {
        att = readAttachment(expand(settings.connect, folder, process.env), home);
      } catch (err) {
        const detail = err instanceof Error ? err.message : String(err);
        traceError('cannot attach:', detail);
        this.setState('stopped', detail);
        this.toast(`OpenProgram: cannot attach to the server: ${detail}`);
        return;
      }
      plan.initializationOptions.token = att.token;
      traceInfo(`attaching to 127.0.0.1:${att.port}`);
      serverOptions = loopback(att.port);
    } else {
      // Spawned here, before the language client exists: a missing executable is our one clear
      // message (not the client's stack trace), and the process leads its own group, so a crash
      // or a stop can end everything it started.
      const found = findServer(plan.command, process.env, os.homedir(), this.host.storageDir || undefined);
      if (!found) {
        const detail = `${plan.command} was not found on PATH${plan.command === SERVER_NAME ? ' or in a uv/pipx install' : ''}`;
        traceError('server failed to start:', detail);
        this.setState('stopped', detail);
        if (plan.command === SERVER_NAME && this.host.storageDir) this.offerInstall();
        else this.toast(`OpenProgram: the server did not start: ${detail} (set openprogram.server.command).`);
        return;
      }
      traceInfo(`server executable: ${found}`);
      const dir = keptDir(this.host.storageDir, folder);
      if (keepable(plan.args, dir)) {
        // kept across window reloads: attached over loopback (docs/decisions/vscode-reattach.md)
        const kept = await this.attachKept(found, plan, dir);
        if (!kept) return;
        plan.initializationOptions.token = kept.token;
        serverOptions = loopback(kept.port);
      } else {
        const spawned = await this.spawnStdio(found, plan);
        if (!spawned) return;
        serverOptions = spawned;
      }
    }
    const clientOptions: LanguageClientOptions = {
      outputChannel: this.output,
      traceOutputChannel: this.trace,
      revealOutputChannelOn: 4, // RevealOutputChannelOn.Never
      initializationOptions: plan.initializationOptions,
      synchronize: { configurationSection: 'openprogram' },
      // files of the workspace: agent blame (code lenses, hovers, the restore-hunk code action)
      documentSelector: [{ scheme: 'file' }],
      // We say what happened (banner and one notification with Restart) instead of the
      // client's own restarts and toasts.
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => ({ action: CloseAction.DoNotRestart, handled: true }),
      },
      initializationFailedHandler: () => false,
    };
    const client = new LanguageClient('openprogram', 'OpenProgram', serverOptions, clientOptions);
    client.registerFeature(new OpenProgramFeature());
    this.listeners.push(
      client.onNotification(ServerNotifications.event, (p: EventParams) => {
        this.events.fire(p);
      }),
      client.onRequest<PermissionOutcome, unknown>(
        ServerRequests.requestPermission,
        (p: PermissionParams, token: api.CancellationToken): Promise<PermissionOutcome> =>
          this.permissionHandler ? this.permissionHandler(p, token) : Promise.resolve({ outcome: 'cancelled' }),
      ),
      client.onRequest<QuestionOutcome, unknown>(
        ServerRequests.askQuestion,
        (p: QuestionParams, token: api.CancellationToken): Promise<QuestionOutcome> =>
          this.questionHandler ? this.questionHandler(p, token) : Promise.resolve({ cancelled: true }),
      ),
      client.onRequest(ServerRequests.diagnostics, (p: wire.DiagnosticsParams) =>
        answerDiagnostics(api.languageHost(), p)),
      client.onRequest(ServerRequests.navigate, (p: wire.NavigateParams) => answerNavigate(api.languageHost(), p)),
      client.onDidChangeState((e) => {
        if (e.newState === State.Stopped && this.client === client && this.state === 'running') {
          // The connection closes before the process is reaped: wait (briefly) for its cause.
          const exited = this.exited;
          void Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]).then(() => {
            if (this.client !== client || this.state !== 'running') return;
            const detail = this.ended ?? 'the server exited';
            traceError('server stopped:', detail);
            this.setState('stopped', detail);
            this.toast(`OpenProgram: the server stopped (${detail}). Restart it from the chat panel or the status bar.`);
          });
        } else if (e.newState === State.Running && this.client === client) {
          this.setState('running');
        }
      }),
    );
    this.client = client;
    this.setState('starting');
    try {
      await client.start();
      this.serverVersion = client.initializeResult?.serverInfo?.version;
      traceInfo(`server version ${this.serverVersion ?? 'unknown'}, extension ${this.host.version}`);
      this.setState('running');
      this.clearNotice();
      traceInfo('server running');
    } catch (err) {
      const detail = this.ended ?? (err instanceof Error ? err.message : String(err));
      traceError('server failed to start:', detail);
      this.setState('stopped', detail);
      this.toast(`OpenProgram: the server did not start: ${detail}.`);
    }
  }

  /** A server that did not start: logged, the state and a toast say why. */
  private startFailed(err: unknown): undefined {
    const detail = err instanceof Error ? err.message : String(err);
    traceError('server failed to start:', detail);
    this.setState('stopped', detail);
    this.toast(`OpenProgram: the server did not start: ${detail}.`);
    return undefined;
  }

  /** Start the server as this window's child on stdio; undefined (the failure shown) when it cannot. */
  private async spawnStdio(found: string, plan: ReturnType<typeof launchPlan>): Promise<ServerOptions | undefined> {
    let proc: ServerProcess;
    try {
      proc = await spawnServer(found, plan.args, { cwd: plan.cwd, env: plan.env });
    } catch (err) {
      return this.startFailed(err);
    }
    this.server = proc;
    this.ended = undefined;
    this.exited = new Promise<void>((resolve) => {
      proc.onExit((code, signal) => {
        proc.killGroup();
        if (this.server === proc) this.ended = exitDetail(code, signal);
        resolve();
      });
    });
    return async () => ({ process: proc.child, detached: false });
  }

  /**
   * Attach to the workspace's kept server, or start it (detached, so it outlives the window);
   * undefined (the failure shown) when it cannot start.
   */
  private async attachKept(found: string, plan: ReturnType<typeof launchPlan>, dir: string): Promise<Kept | undefined> {
    const print = fingerprint({ command: found, args: plan.args, cwd: plan.cwd, home: plan.env.OPENPROGRAM_HOME, version: this.host.version });
    let kept: Kept;
    try {
      kept = await attachOrStart(found, plan.args, { cwd: plan.cwd, env: plan.env, dir, fingerprint: print });
    } catch (err) {
      return this.startFailed(err);
    }
    traceInfo(`${kept.started ? 'started' : 're-attaching to'} the workspace's server (pid ${kept.pid}, 127.0.0.1:${kept.port}; log ${path.join(dir, 'server.log')})`);
    this.kept = kept;
    this.keptAt = dir;
    this.ended = undefined;
    // How it ended: this window's child says (a signal, a code); a server another window
    // started is watched by its pid once the connection closes.
    this.exited = new Promise<void>((resolve) => {
      if (kept.child) {
        kept.child.once('exit', (code, signal) => {
          if (this.kept === kept) this.ended = exitDetail(code, signal);
          resolve();
        });
        return;
      }
      const poll = setInterval(() => {
        if (this.kept !== kept) {
          clearInterval(poll);
          resolve();
        } else if (!pidAlive(kept.pid)) {
          clearInterval(poll);
          this.ended = 'the server exited';
          resolve();
        }
      }, 250);
      poll.unref?.();
    });
    return kept;
  }

  /**
   * Say what failed in a notification that closes itself once the server runs again (or the
   * next failure replaces it): no stale or duplicate error toasts. The panel's banner and the
   * status bar item carry the Restart and Open Settings actions.
   */
  private toast(message: string): void {
    if (this.lastToast === message) return;
    this.clearNotice();
    this.lastToast = message;
    api.showNotice(message, (close) => {
      this.closeNotice = close;
    });
  }

  /** Offer to install the extension's version of the server into its storage (once at a time). */
  private offerInstall(): void {
    if (this.offering) return;
    this.offering = true;
    const { version, extensionDir, storageDir } = this.host;
    void offerInstall(version, {
      ask: (message, items) => api.showWarning(message, ...items),
      install: () => api.withNotificationProgress(`OpenProgram: installing ${SERVER_NAME} ${version}…`, () =>
        installServer(storageDir, installSteps(storageDir, installSource(extensionDir, version)))),
      openSettings: () => api.executeCommand('workbench.action.openSettings', 'openprogram.server.command'),
      restart: () => {
        traceInfo(`installed ${SERVER_NAME} ${version} into ${storageDir}`);
        void this.restart();
      },
      fail: (message) => {
        traceError(message);
        void api.showError(message);
      },
    }).finally(() => {
      this.offering = false;
    });
  }

  private clearNotice(): void {
    this.closeNotice?.();
    this.closeNotice = undefined;
    this.lastToast = null;
  }

}
