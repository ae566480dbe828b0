/** Module-level logging into the extension's LogOutputChannel. */
import type { LogOutputChannel } from './vscodeapi';

let channel: LogOutputChannel | undefined;

/** Route log calls to this channel. */
export function setLogChannel(c: LogOutputChannel): void {
  channel = c;
}

/** Log an error. */
export function traceError(...parts: unknown[]): void {
  channel?.error(parts.map(String).join(' '));
}

/** Log a warning. */
export function traceWarn(...parts: unknown[]): void {
  channel?.warn(parts.map(String).join(' '));
}

/** Log an informational line. */
export function traceInfo(...parts: unknown[]): void {
  channel?.info(parts.map(String).join(' '));
}

/** Log a debugging detail. */
export function traceVerbose(...parts: unknown[]): void {
  channel?.debug(parts.map(String).join(' '));
}
