/** The approval rules quick pick: every standing rule, chosen to revoke it. */
import { Requests, type RuleInfo } from './protocol';

export interface RuleItem {
  label: string;
  description: string;
  detail: string;
  rule: RuleInfo;
}

/** One quick pick row per rule: what it covers, its scope, and where it came from. */
export function ruleItems(rules: RuleInfo[]): RuleItem[] {
  return rules.map((r) => {
    const verb = r.decision === 'allow' ? 'Allow' : 'Reject';
    const scope = r.scope === 'session' ? `this session (${r.sessionId ?? '?'})` : 'this workspace';
    const origin =
      r.origin === 'settings'
        ? 'from settings — change the setting to remove it'
        : `${r.origin === 'legacy' ? 'older rule' : 'chosen in a prompt'}${r.createdAt ? ` on ${r.createdAt}` : ''}${r.toolCallId ? ` for call ${r.toolCallId}` : ''}`;
    return {
      label: `${r.decision === 'allow' ? '$(check)' : '$(circle-slash)'} ${verb}: ${r.description || r.value || r.tool}`,
      description: scope,
      detail: origin,
      rule: r,
    };
  });
}

/** What the client needs to list and revoke rules. */
export interface RulesPort {
  request<T>(method: string, params: unknown): Promise<T>;
}

/** List the rules (of `sessionId` too, when given). */
export async function listRules(client: RulesPort, sessionId: string | null): Promise<RuleInfo[]> {
  const { rules } = await client.request<{ rules: RuleInfo[] }>(Requests.rules, sessionId ? { sessionId } : {});
  return rules;
}

/** Revoke a rule; the server applies it at once. */
export async function revokeRule(client: RulesPort, ruleId: string): Promise<RuleInfo> {
  const { revoked } = await client.request<{ revoked: RuleInfo }>(Requests.revokeRule, { ruleId });
  return revoked;
}
