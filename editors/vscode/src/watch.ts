/** Watching a live session another editor drives on a shared `serve --tcp` server. */
import type { AgentPort } from './client';
import type { ChatController } from './chat/controller';
import { Requests } from './protocol';

export interface SubscribeResult {
  sessionId: string;
  headId: string | null;
  runningTurnId?: string | null;
}

/**
 * Subscribe to a session and show it in the chat panel; a turn running there streams in (its
 * approvals as read-only cards), and so do the turns other editors start in it later.
 */
export async function watchSession(
  p: { client: AgentPort; controller: ChatController; chatView: { reveal(): void } },
  sessionId: string,
): Promise<SubscribeResult> {
  const sub = await p.client.request<SubscribeResult>(Requests.subscribe, { sessionId });
  await p.controller.loadSession(sessionId);
  if (sub.runningTurnId) p.controller.watchTurn(sessionId, sub.runningTurnId);
  p.chatView.reveal();
  return sub;
}
