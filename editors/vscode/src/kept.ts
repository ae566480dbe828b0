/**
 * The server kept across window reloads: one `serve --tcp --keep-turns` per workspace, started
 * detached, that a window attaches to over loopback. A reloaded window (or a second one on the
 * same workspace) finds it through a record in the extension's storage and attaches again, so a
 * running turn goes on and the panel re-attaches to it (docs/decisions/vscode-reattach.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** How long a turn whose window went away waits for one to re-attach (a reload takes seconds). */
export const KEEP_TURNS = 120;
/** How long the server stays without a window (and without a running turn). */
export const IDLE_EXIT = 60;
/** How long a start may take before the window gives up on it. */
const START_TIMEOUT = 60_000;
const LISTENING = /listening on 127\.0\.0\.1:(\d+); token (\S+); run file/;

/** What a window needs to attach to the workspace's server. */
export interface KeptRecord {
  pid: number;
  port: number;
  token: string;
  /** What it was started with: another command, arguments, folder or version start another. */
  fingerprint: string;
}

/** The kept server a window attaches to; `child` when this window started it. */
export interface Kept extends KeptRecord {
  child?: ChildProcess;
  started: boolean;
}

/**
 * Where a workspace's kept server is recorded: the extension's global storage, by folder (every
 * window of the folder shares it; a window's own workspace storage is not always shared: two
 * code-server tabs on one folder get two).
 */
export function keptDir(globalStorage: string, folder: string | undefined): string | undefined {
  if (!globalStorage || !folder) return undefined;
  return path.join(globalStorage, 'servers', crypto.createHash('sha256').update(path.resolve(folder)).digest('hex').slice(0, 24));
}

/** Whether a launch can be kept: the plain `serve` (no transport of its own) in a workspace. */
export function keepable(args: string[], storageDir: string | undefined): storageDir is string {
  return !!storageDir && args[0] === 'serve' && !args.includes('--tcp');
}

/** The same start gives the same fingerprint; the model (sent with every turn) is not in it. */
export function fingerprint(p: { command: string; args: string[]; cwd?: string; home?: string; version: string }): string {
  return crypto.createHash('sha256').update(JSON.stringify([p.command, p.args, p.cwd ?? '', p.home ?? '', p.version])).digest('hex');
}

/** The arguments of a kept start: the user's `serve …` and the loopback transport after them. */
export function keptArgs(args: string[], tokenFile: string): string[] {
  return [...args, '--tcp', '0', '--token-file', tokenFile, '--idle-exit', String(IDLE_EXIT), '--keep-turns', String(KEEP_TURNS)];
}

/** A record as written, or null when there is none or it is not one. */
export function readRecord(file: string): KeptRecord | null {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
  const r = data as Partial<KeptRecord>;
  if (typeof r.pid !== 'number' || typeof r.port !== 'number' || typeof r.token !== 'string' || typeof r.fingerprint !== 'string') return null;
  return { pid: r.pid, port: r.port, token: r.token, fingerprint: r.fingerprint };
}

/** Write a private file whole (readers never see half of it). */
function writePrivate(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

export function writeRecord(file: string, rec: KeptRecord): void {
  writePrivate(file, JSON.stringify(rec));
}

export function removeRecord(file: string, pid?: number): void {
  const rec = readRecord(file);
  if (pid !== undefined && rec && rec.pid !== pid) return; // another window's newer server
  fs.rmSync(file, { force: true });
}

/** Whether a process runs (a zombie does not). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc: the signal said it runs
  }
}

/** Whether `pid` is an openprogram-lsp `serve --tcp` on `port` (not a reused pid). */
export function isServer(pid: number, port: number): boolean {
  if (!pidAlive(pid)) return false;
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.includes('serve') && argv.includes('--tcp');
  } catch {
    return port > 0; // no /proc: trust the record
  }
}

/** Hold `lock` (a directory) while `fn` runs: two windows opening at once start one server. */
export async function withLock<T>(lock: string, fn: () => Promise<T>, staleMs = START_TIMEOUT): Promise<T> {
  fs.mkdirSync(path.dirname(lock), { recursive: true, mode: 0o700 });
  for (let i = 0; ; i++) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let age = 0;
      try {
        age = Date.now() - fs.statSync(lock).mtimeMs;
      } catch {
        continue; // released meanwhile
      }
      if (age > staleMs || i > staleMs / 100) fs.rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Start the server detached (its own session and group, its log in a file) and wait until it listens. */
export async function startKept(
  command: string,
  args: string[],
  options: { cwd?: string; env: Record<string, string>; dir: string; fingerprint: string },
): Promise<Kept> {
  const tokenFile = path.join(options.dir, 'server.token');
  const token = crypto.randomBytes(32).toString('base64url');
  writePrivate(tokenFile, `${token}\n`);
  const logFile = path.join(options.dir, 'server.log');
  const log = fs.openSync(logFile, 'w', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(command, keptArgs(args, tokenFile), { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'ignore', log] });
  } finally {
    fs.closeSync(log);
  }
  const spawned = await new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (err: NodeJS.ErrnoException) =>
      resolve(new Error(`cannot start ${command}: ${err.code === 'ENOENT' ? 'no such executable (set openprogram.server.command)' : err.message}`)));
  });
  if (spawned) throw spawned;
  let ended: string | null = null;
  child.once('exit', (code, signal) => {
    ended = signal ? `killed by ${signal}` : `exit code ${code ?? '?'}`;
  });
  const deadline = Date.now() + START_TIMEOUT;
  for (;;) {
    const text = fs.readFileSync(logFile, 'utf8');
    const m = LISTENING.exec(text);
    if (m) {
      const rec: Kept = { pid: child.pid ?? 0, port: Number(m[1]), token, fingerprint: options.fingerprint, child, started: true };
      writeRecord(path.join(options.dir, 'server.json'), rec);
      return rec;
    }
    if (ended !== null || Date.now() > deadline) {
      const last = text.trim().split('\n').filter(Boolean).pop() ?? '';
      if (ended === null) {
        try {
          process.kill(-(child.pid ?? 0), 'SIGKILL');
        } catch { /* gone */ }
      }
      throw new Error(`the server did not listen (${ended ?? 'timed out'})${last ? `: ${last}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The workspace's running kept server started the same way, else a new one (under the lock). */
export async function attachOrStart(
  command: string,
  args: string[],
  options: { cwd?: string; env: Record<string, string>; dir: string; fingerprint: string },
): Promise<Kept> {
  const file = path.join(options.dir, 'server.json');
  return withLock(path.join(options.dir, 'server.lock'), async () => {
    const rec = readRecord(file);
    if (rec && rec.fingerprint === options.fingerprint && isServer(rec.pid, rec.port)) return { ...rec, started: false };
    // another start (settings changed while no window was open): that server ends by itself
    // once its turns and windows are gone (--idle-exit); this window starts its own
    return startKept(command, args, options);
  });
}

/** End a kept server (Restart Server): SIGTERM finalizes its turns, SIGKILL after `graceMs`. */
export async function endKept(pid: number, graceMs = 10_000): Promise<void> {
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pid, sig); // its group: what it left running too
    } catch {
      try {
        process.kill(pid, sig);
      } catch { /* gone */ }
    }
  };
  if (!pidAlive(pid)) {
    signal('SIGKILL');
    return;
  }
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pidAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  signal('SIGKILL');
}
