/** Attaching to a running `openprogram-lsp serve --tcp`: find its port and token in the run file. */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface Attachment {
  port: number;
  token: string;
}

/** `$OPENPROGRAM_HOME`, else `${XDG_DATA_HOME:-~/.local/share}/openprogram-lsp`. */
export function stateHome(home: string, env: Record<string, string | undefined>): string {
  if (home) return home;
  if (env.OPENPROGRAM_HOME) return env.OPENPROGRAM_HOME;
  const data = env.XDG_DATA_HOME || path.join(env.HOME ?? '', '.local', 'share');
  return path.join(data, 'openprogram-lsp');
}

/** The run file a `connect` setting names: a port (`7021`) or a path to `<port>.json`. */
export function runFilePath(connect: string, home: string): string {
  return /^\d+$/.test(connect) ? path.join(home, 'run', `${connect}.json`) : connect;
}

/** Port and token from a run file; throws a one-line Error naming what is wrong. */
export function readAttachment(connect: string, home: string): Attachment {
  const file = runFilePath(connect, home);
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`cannot read the server's run file ${file}: ${(e as Error).message}`);
  }
  const rec = data as { port?: unknown; token?: unknown };
  if (typeof rec.port !== 'number' || typeof rec.token !== 'string' || !rec.token) {
    throw new Error(`${file} is not an openprogram-lsp run file (port and token expected)`);
  }
  return { port: rec.port, token: rec.token };
}
