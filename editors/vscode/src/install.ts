/**
 * Finding the server when `openprogram.server.command` is left at its default, installing the
 * extension's own version into its global storage when none is found, and saying whether the
 * server that runs matches the extension. Pure over its inputs (env, home, a file probe, a
 * process runner) so the tests drive it without VS Code.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';

/** The executable's name; a bare `server.command` equal to it means "find it". */
export const SERVER_NAME = 'openprogram-lsp';

type Env = Record<string, string | undefined>;

/** Whether `file` is a regular file this process may execute. */
export function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The venv the extension installs the server into, under its global storage. */
export function storageVenv(storageDir: string): string {
  return path.join(storageDir, 'server');
}

/**
 * Where the server may be, in order: PATH, then the bin directories uv (`uv tool install`) and
 * pipx (`pipx install`) link executables into, then their own venvs (a tool installed with its
 * bin dir off PATH), then the extension's own install.
 */
export function candidateDirs(env: Env, home: string, storageDir: string | undefined): string[] {
  const dirs: string[] = [];
  const add = (d: string | undefined): void => {
    if (d && path.isAbsolute(d) && !dirs.includes(d)) dirs.push(d);
  };
  for (const d of (env.PATH ?? '').split(path.delimiter)) add(d);
  const dataHome = env.XDG_DATA_HOME || path.join(home, '.local', 'share');
  add(env.UV_TOOL_BIN_DIR);
  add(env.XDG_BIN_HOME);
  add(env.PIPX_BIN_DIR);
  add(path.join(home, '.local', 'bin'));
  add(path.join(env.UV_TOOL_DIR || path.join(dataHome, 'uv', 'tools'), SERVER_NAME, 'bin'));
  add(path.join(env.PIPX_HOME || path.join(dataHome, 'pipx'), 'venvs', SERVER_NAME, 'bin'));
  add(path.join(home, '.local', 'pipx', 'venvs', SERVER_NAME, 'bin')); // pipx before 1.3
  if (storageDir) add(path.join(storageVenv(storageDir), 'bin'));
  return dirs;
}

/**
 * The server to run for `command`: a path (it has a slash) is taken as given; the bare default
 * name is looked up in {@link candidateDirs}; any other bare name only on PATH. Undefined when
 * not found.
 */
export function findServer(
  command: string,
  env: Env,
  home: string,
  storageDir: string | undefined,
  exists: (file: string) => boolean = isExecutable,
): string | undefined {
  if (command.includes('/')) return command;
  const dirs = command === SERVER_NAME
    ? candidateDirs(env, home, storageDir)
    : (env.PATH ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d));
  for (const d of dirs) {
    const file = path.join(d, command);
    if (exists(file)) return file;
  }
  return undefined;
}

/**
 * What to install: a wheel of exactly this version shipped beside the extension (`server/` in
 * its folder) when there is one, else the project's requirement pinned to this version.
 */
export function installSource(extensionDir: string, version: string, list: (dir: string) => string[] = safeList): string {
  const dir = path.join(extensionDir, 'server');
  const prefix = `openprogram_lsp-${version}-`;
  const wheel = list(dir).filter((f) => f.startsWith(prefix) && f.endsWith('.whl')).sort()[0];
  return wheel ? path.join(dir, wheel) : `${SERVER_NAME}==${version}`;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The command lines of an install: a venv in the storage, then pip into it. */
export function installSteps(storageDir: string, source: string, python = 'python3', pipArgs: string[] = []): string[][] {
  const venv = storageVenv(storageDir);
  return [
    [python, '-m', 'venv', '--clear', venv],
    [path.join(venv, 'bin', 'python'), '-m', 'pip', 'install', '--disable-pip-version-check', '--quiet', ...pipArgs, source],
  ];
}

/** Runs one command line; rejects with its output when it fails. */
export type Runner = (argv: string[]) => Promise<void>;

/** Run a command line with node's child_process (no shell). */
export const runCommand: Runner = (argv) =>
  new Promise((resolve, reject) => {
    execFile(argv[0], argv.slice(1), { maxBuffer: 16 * 1024 * 1024, timeout: 600_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `${argv[0]} was not found` : lastLine(stderr) || err.message;
      reject(new Error(`${path.basename(argv[0])} ${argv[1] === '-m' ? argv[2] : ''}`.trim() + ` failed: ${why}`));
    });
  });

function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines[lines.length - 1] ?? '';
}

/** Install the server into the storage; resolves to the installed executable. */
export async function installServer(storageDir: string, steps: string[][], run: Runner = runCommand): Promise<string> {
  for (const argv of steps) await run(argv);
  const exe = path.join(storageVenv(storageDir), 'bin', SERVER_NAME);
  if (!isExecutable(exe)) throw new Error(`the install finished but ${exe} is missing`);
  return exe;
}

/** What the user can do when the server was not found. */
export const INSTALL = 'Install';
export const OPEN_SETTINGS = 'Open Settings';

/** The notification offered when no server was found. */
export function missingMessage(version: string): string {
  return `OpenProgram: ${SERVER_NAME} was not found on PATH or in a uv/pipx install. Install version ${version} into the extension's storage, or set openprogram.server.command.`;
}

/** The version a `--version` line or serverInfo names ("openprogram-lsp 0.1.0" → "0.1.0"). */
export function parseVersion(text: string | undefined): string | undefined {
  const m = /(\d+\.\d+(?:\.\d+)?(?:[-.+]?[0-9A-Za-z.]+)?)\s*$/.exec((text ?? '').trim());
  return m ? m[1] : undefined;
}

/** One sentence on the running server's version against the extension's. */
export function versionNote(server: string | undefined, extension: string): { text: string; matches: boolean } {
  if (!server) return { text: `server version unknown (extension ${extension})`, matches: false };
  if (server === extension) return { text: `server ${server}, the extension's version`, matches: true };
  return { text: `server ${server} does not match the extension (${extension}): install ${SERVER_NAME} ${extension}`, matches: false };
}

/** What the offer needs from VS Code and the client (the tests play the user). */
export interface OfferHost {
  /** Show a notification with actions; resolves to the action taken. */
  ask(message: string, items: string[]): PromiseLike<string | undefined>;
  /** Run the install (with progress); resolves to the installed executable. */
  install(): PromiseLike<string>;
  openSettings(): unknown;
  /** Start the server again once it is installed. */
  restart(): unknown;
  /** Say what failed, in one line. */
  fail(message: string): unknown;
}

/**
 * Offer to install the server (the extension's version) when none was found: "Install" installs
 * it into the extension's storage and restarts, "Open Settings" shows `server.command`.
 */
export async function offerInstall(version: string, host: OfferHost): Promise<'installed' | 'settings' | 'dismissed' | 'failed'> {
  const choice = await host.ask(missingMessage(version), [INSTALL, OPEN_SETTINGS]);
  if (choice === OPEN_SETTINGS) {
    host.openSettings();
    return 'settings';
  }
  if (choice !== INSTALL) return 'dismissed';
  try {
    await host.install();
  } catch (err) {
    host.fail(`OpenProgram: installing ${SERVER_NAME} ${version} failed: ${err instanceof Error ? err.message : String(err)}`);
    return 'failed';
  }
  host.restart();
  return 'installed';
}
