/** What the status bar item and the activity bar badge say: server, running turn, waiting cards. */
import type { ServerState } from './client';
import { waitingCount, type ChatState } from './webview/state';

export interface StatusView {
  text: string;
  tooltip: string;
  /** Cards waiting for the user (the badge on the activity bar icon); 0 hides it. */
  waiting: number;
  /** Whether the item should stand out (an error or a card waiting). */
  alert: boolean;
}

/** The status bar item for a server state and the chat's state. */
export function statusView(
  server: ServerState,
  detail: string | undefined,
  chat: ChatState,
  version?: { text: string; matches: boolean },
): StatusView {
  const waiting = waitingCount(chat);
  if (server !== 'running') {
    const text = server === 'starting' ? '$(sync~spin) OpenProgram' : '$(error) OpenProgram';
    const tooltip = server === 'starting' ? 'OpenProgram: starting the server…' : `OpenProgram: the server is not running${detail ? ` (${detail})` : ''}. Click to restart it.`;
    return { text, tooltip, waiting, alert: server === 'stopped' };
  }
  const parts = [chat.busy ? '$(loading~spin) OpenProgram' : '$(hubot) OpenProgram'];
  if (waiting > 0) parts.push(`$(bell-dot) ${waiting}`);
  const lines = [chat.busy ? 'OpenProgram: a turn is running.' : 'OpenProgram: ready.'];
  if (waiting > 0) lines.push(`${waiting} card${waiting === 1 ? '' : 's'} waiting for your answer.`);
  if (version) {
    lines.push(`${version.text[0].toUpperCase()}${version.text.slice(1)}.`);
    if (!version.matches) parts.push('$(warning)');
  }
  lines.push('Click to open the chat.');
  return { text: parts.join(' '), tooltip: lines.join(' '), waiting, alert: waiting > 0 || (version !== undefined && !version.matches) };
}
