/** The context meter: how full the model's context window is, for the chat view's header. */
import type { ContextUsageData } from '../protocol';

const short = (n: number): string => (n >= 1000 ? `${Math.round(n / 100) / 10}k` : String(n));

/** `context 42% · 54k/128k` (and the branch's compactions), from a `context.usage` event. */
export function meterText(data: ContextUsageData): string {
  const window = Math.max(1, data.windowTokens);
  const pct = Math.min(999, Math.round((100 * data.usedTokens) / window));
  const compacted = data.compactions > 0 ? ` · compacted ${data.compactions}×` : '';
  return `context ${pct}% · ${short(data.usedTokens)}/${short(data.windowTokens)}${compacted}`;
}
