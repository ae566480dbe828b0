/** The server's process: spawned as the leader of its own process group, ended as a group. */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ServerProcess {
  readonly child: ChildProcess;
  /** SIGKILL the whole group (the server and what it left running); safe to call twice. */
  killGroup(): void;
  onExit(fn: (code: number | null, signal: NodeJS.Signals | null) => void): void;
}

/** Why a process ended, in words. */
export function exitDetail(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `the server was killed by ${signal}`;
  return code === 0 ? 'the server exited' : `the server exited with code ${code ?? '?'}`;
}

/** Start `command`; resolves once it runs, rejects with one clear line when it cannot start. */
export function spawnServer(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> },
): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: 'pipe' });
    } catch (err) {
      reject(new Error(`cannot start ${command}: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    let group: number | undefined;
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    const proc: ServerProcess = {
      child,
      killGroup() {
        if (group === undefined) return;
        try {
          process.kill(-group, 'SIGKILL');
        } catch {
          // the group is gone already
        }
        if (exited) group = undefined; // the leader is reaped: its id may be reused later
      },
      onExit(fn) {
        child.once('exit', fn);
      },
    };
    child.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'ENOENT' ? 'no such executable (set openprogram.server.command)' : err.message;
      reject(new Error(`cannot start ${command}: ${why}`));
    });
    child.once('spawn', () => {
      group = child.pid;
      resolve(proc);
    });
  });
}
