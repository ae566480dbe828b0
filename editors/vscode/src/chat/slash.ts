/**
 * Slash commands typed in the chat input (`openprogram/commands`). The built-ins other than
 * `/compact` are carried out here, in the editor, as the server's context/commands.py
 * describes them; `/compact` and custom commands are sent as the message they are, and the
 * server substitutes `$ARGUMENTS` (one place, shared with Neovim and the CLI). Pure logic.
 */
import type { CommandInfo } from '../protocol';
import { PERMISSION_MODES } from '../settings';
import type { Completion } from '../webview/messages';

/** The built-ins the editor runs itself. */
export const EDITOR_BUILTINS = ['fork', 'undo', 'model', 'mode', 'new'] as const;
export type EditorBuiltin = (typeof EDITOR_BUILTINS)[number];

/** A command name as the server accepts it (`name` or `dir:name`). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*(:[A-Za-z0-9][A-Za-z0-9_.-]*)?$/;

/** `/name rest` as its name and the rest; null when the text is not a command. */
export function parseSlash(text: string): { name: string; rest: string } | null {
  const t = text.trim();
  if (!t.startsWith('/') || t.length < 2) return null;
  const name = t.slice(1).split(/[ \n]/, 1)[0];
  if (!NAME.test(name)) return null;
  return { name, rest: t.slice(1 + name.length).trim() };
}

/** What sending the input does. */
export type SlashAction =
  | { kind: 'message'; text: string }
  | { kind: 'builtin'; name: EditorBuiltin; rest: string }
  | { kind: 'unknown'; name: string };

/**
 * How the typed text is sent: a built-in run here, a message (plain text, `/compact`, a custom
 * command, or `//text` with one slash taken off), or an unknown command that is not sent.
 * `commands` is the server's list (custom commands); null when it could not be fetched.
 */
export function classify(text: string, commands: CommandInfo[] | null): SlashAction {
  const body = text.trim();
  if (body.startsWith('//')) return { kind: 'message', text: body.slice(1) };
  const parsed = parseSlash(body);
  if (!parsed) return { kind: 'message', text: body };
  if ((EDITOR_BUILTINS as readonly string[]).includes(parsed.name)) {
    return { kind: 'builtin', name: parsed.name as EditorBuiltin, rest: parsed.rest };
  }
  if (parsed.name === 'compact' || commands?.some((c) => c.name === parsed.name)) return { kind: 'message', text: body };
  return { kind: 'unknown', name: parsed.name };
}

/** The message an unknown `/name` gets (nothing is sent). */
export function unknownMessage(name: string, commands: CommandInfo[] | null): string {
  const names = (commands ?? []).map((c) => `/${c.name}`);
  const list = names.length ? ` Commands here: ${names.join(', ')}.` : '';
  return `Unknown command /${name}: nothing was sent.${list} Type / for the list; start with // to send text that begins with /.`;
}

/** `/mode X`: the mode when X is one, else why not. */
export function modeArgument(rest: string): { mode: string } | { error: string } {
  const mode = rest.trim().toLowerCase();
  return (PERMISSION_MODES as readonly string[]).includes(mode)
    ? { mode }
    : { error: `/mode: “${rest.trim()}” is not a permission mode; use one of ${PERMISSION_MODES.join(', ')}.` };
}

/** Whether `query` is a subsequence of `name` (case-insensitive). */
function subsequence(query: string, name: string): boolean {
  let i = 0;
  const q = query.toLowerCase();
  for (const ch of name.toLowerCase()) if (ch === q[i]) i++;
  return i === q.length;
}

/** The `/` popup's rows for `query`: prefix matches first, then subsequence matches. */
export function commandCompletions(commands: CommandInfo[], query: string): Completion[] {
  const q = query.toLowerCase();
  const prefix = commands.filter((c) => c.name.toLowerCase().startsWith(q));
  const rest = commands.filter((c) => !prefix.includes(c) && subsequence(q, c.name));
  return [...prefix, ...rest].map((c) => ({
    label: `/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ''}`,
    detail: c.kind === 'custom' ? `${c.description} (${c.path ?? c.source})` : c.description,
    insert: `/${c.name}${c.argumentHint ? ' ' : ''}`,
  }));
}
