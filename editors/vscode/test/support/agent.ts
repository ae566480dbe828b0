// A real `openprogram-lsp serve` over stdio behind the AgentPort interface (no VS Code needed).
import { spawn, type ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node';
import type { AgentPort, PermissionHandler, QuestionHandler, ServerState } from '../../src/client';
import {
  ServerNotifications,
  ServerRequests,
  type EventParams,
  type PermissionOutcome,
  type PermissionParams,
  type QuestionOutcome,
  type QuestionParams,
} from '../../src/protocol';
import { EventEmitter } from './vscode';

export interface RunningAgent {
  agent: AgentPort;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Start the server in `workspace` with its state in `home`, and initialize it (`options`: more initializationOptions). */
export async function startAgent(
  command: string,
  workspace: string,
  home: string,
  model: string,
  options: Record<string, unknown> = {},
): Promise<RunningAgent> {
  const child = spawn(command, ['serve'], {
    cwd: workspace,
    env: { ...process.env, OPENPROGRAM_HOME: home, OPENPROGRAM_MODEL: model },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stderr?.resume();
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout!),
    new rpc.StreamMessageWriter(child.stdin!),
  );
  const events = new EventEmitter<EventParams>();
  const states = new EventEmitter<{ state: ServerState; detail?: string }>();
  const agent: AgentPort = {
    request: <R>(method: string, params: unknown, token?: rpc.CancellationToken) =>
      (token ? conn.sendRequest(method, params, token) : conn.sendRequest(method, params)) as Promise<R>,
    onEvent: events.event as AgentPort['onEvent'],
    onState: states.event as AgentPort['onState'],
    permissionHandler: undefined as PermissionHandler | undefined,
    questionHandler: undefined as QuestionHandler | undefined,
  };
  conn.onNotification(ServerNotifications.event, (p: EventParams) => events.fire(p));
  conn.onRequest<PermissionOutcome, unknown>(ServerRequests.requestPermission, (p: PermissionParams, token: rpc.CancellationToken) =>
    agent.permissionHandler ? agent.permissionHandler(p, token) : Promise.resolve({ outcome: 'cancelled' }));
  conn.onRequest<QuestionOutcome, unknown>(ServerRequests.askQuestion, (p: QuestionParams, token: rpc.CancellationToken) =>
    agent.questionHandler ? agent.questionHandler(p, token) : Promise.resolve({ cancelled: true }));
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onNotification('$/progress', () => undefined);
  conn.onNotification('window/logMessage', () => undefined);
  conn.onNotification('window/showMessage', () => undefined);
  conn.listen();
  const uri = pathToFileURL(workspace).toString();
  await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: uri,
    workspaceFolders: [{ uri, name: 'workspace' }],
    capabilities: {
      window: { workDoneProgress: true },
      experimental: { openprogram: { permissions: true, questions: true } },
    },
    initializationOptions: { model, permissionMode: 'ask', ...options },
  });
  await conn.sendNotification('initialized', {});
  states.fire({ state: 'running' });
  return {
    agent,
    process: child,
    async stop() {
      try {
        await conn.sendRequest('shutdown');
        await conn.sendNotification('exit');
      } catch {
        /* already gone */
      }
      conn.dispose();
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}
