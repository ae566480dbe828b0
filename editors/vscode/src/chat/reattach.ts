/**
 * Re-attaching to a running turn (a reloaded window, a second one): the history page drawn
 * without the running turn's nodes, so its replayed events draw them once.
 */
import type { HistoryResult } from '../protocol';
import type { EventParams } from '../protocol';

/**
 * The history without the nodes of the turns `held` replays (their `turn.started` names them),
 * its head moved back to where the session's running turn started (`runningTurnId`'s
 * predecessor), so the replayed turn continues the branch on screen.
 */
export function withoutRunningTurn(
  h: HistoryResult,
  held: EventParams[],
  runningTurnId: string | null | undefined,
): { headId: string | null; nodes: HistoryResult['nodes'] } {
  const running = new Set<string>();
  let predecessor: string | null | undefined;
  for (const e of held) {
    if (e.type !== 'turn.started' || !e.replayed) continue;
    for (const key of ['userNodeId', 'assistantNodeId'] as const) {
      const id = e.data[key];
      if (typeof id === 'string') running.add(id);
    }
    if (e.turnId && e.turnId === runningTurnId && typeof e.data.predecessor === 'string') predecessor = e.data.predecessor;
  }
  if (running.size === 0) return { headId: h.headId ?? null, nodes: h.nodes };
  const nodes = h.nodes.filter((n) => !running.has(n.id));
  const head = h.headId ?? null;
  return { headId: head !== null && running.has(head) ? (predecessor ?? nodes[nodes.length - 1]?.id ?? null) : head, nodes };
}
