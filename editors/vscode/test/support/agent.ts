// A real `openprogram-lsp serve` over stdio behind the AgentPort interface (no VS Code needed).
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
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
  const agent = await speak(child.stdout!, child.stdin!, workspace, model, options);
  return {
    agent: agent.agent,
    process: child,
    async stop() {
      await agent.stop();
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

/** A window attached to a kept `serve --tcp` on 127.0.0.1:`port` (`stop`: the window goes). */
export async function connectAgent(
  port: number,
  token: string,
  workspace: string,
  model: string,
): Promise<{ agent: AgentPort; stop(): Promise<void> }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  const out = await speak(socket, socket, workspace, model, { token });
  return {
    agent: out.agent,
    async stop() {
      await out.stop();
      socket.destroy();
    },
  };
}

/** The AgentPort over one LSP connection, initialized. */
async function speak(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  workspace: string,
  model: string,
  options: Record<string, unknown>,
): Promise<{ agent: AgentPort; stop(): Promise<void> }> {
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(input as never),
    new rpc.StreamMessageWriter(output as never),
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
    async stop() {
      try {
        await conn.sendRequest('shutdown');
        await conn.sendNotification('exit');
      } catch {
        /* already gone */
      }
      conn.dispose();
    },
  };
}
