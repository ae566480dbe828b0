/** What a tool card says and offers, apart from the DOM (unit-tested). */
import type { ToolItem } from './state';

/** What a card's badge says: the truth of the call, not the wire's status alone. */
export function toolStatusLabel(item: ToolItem): { label: string; badge: string } {
  // a call the turn's cancel cut says so (live and from history), not just "failed"
  if (item.cancelled) return { label: 'cancelled', badge: 'cancelled' };
  const p = item.permission;
  if (p && p.choice === undefined && !p.withdrawn) {
    return { label: p.readOnly ? 'waiting for the other editor' : 'waiting for approval', badge: 'waiting' };
  }
  if (item.name === 'ask_user' && (item.status === 'in_progress' || item.status === 'pending')) {
    return { label: 'waiting for your answer', badge: 'waiting' };
  }
  return { label: item.status.replace('_', ' '), badge: item.status };
}

/** Options the user answers on the spot; the standing ones ("Always…") wait behind one control. */
export function splitOptions<T extends { kind: string; optionId: string }>(options: T[]): { now: T[]; standing: T[] } {
  const firstAllow = options.find((o) => o.kind === 'allow_once');
  const firstReject = options.find((o) => o.kind === 'reject_once');
  const now = options.filter((o) => o === firstAllow || o === firstReject);
  return now.length === 0 ? { now: options, standing: [] } : { now, standing: options.filter((o) => !now.includes(o)) };
}
