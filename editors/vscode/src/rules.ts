/** The approval rules quick pick: every standing rule, chosen to revoke it (or, for a rule of
 * the `openprogram.rules` setting, to remove it from the settings). */
import { Requests, type RuleInfo } from './protocol';
import { isSettingsRule, type SettingsRule } from './settings';

export interface RuleItem {
  label: string;
  description: string;
  detail: string;
  rule: RuleInfo;
}

/**
 * One quick pick row per rule: what it covers, its scope, and where it came from, in names a user
 * knows (the session's title, never its id or the call's id). `current`: the panel's session;
 * `titleOf`: a session's title, when known.
 */
export function ruleItems(rules: RuleInfo[], current: string | null = null,
  titleOf: (sessionId: string) => string | undefined = () => undefined): RuleItem[] {
  const folders = new Set(rules.map((r) => r.workspace ?? ''));
  return rules.map((r) => {
    const verb = r.decision === 'allow' ? 'Allow' : 'Reject';
    const other = r.sessionId ? titleOf(r.sessionId) : undefined;
    const scope = r.scope !== 'session' ? 'this workspace'
      : !r.sessionId || r.sessionId === current ? 'this session'
        : other ? `the session “${other}”` : 'another session';
    const origin =
      r.origin === 'settings'
        ? 'from the openprogram.rules setting — choose it to remove it from the settings'
        : `${r.origin === 'legacy' ? 'older rule' : 'chosen in a prompt'}${r.createdAt ? ` on ${r.createdAt}` : ''}`;
    const where = folders.size > 1 && r.workspace ? ` · ${r.workspace.split('/').pop() ?? r.workspace}` : '';
    return {
      label: `${r.decision === 'allow' ? '$(check)' : '$(circle-slash)'} ${verb}: ${r.description || r.value || r.tool}`,
      description: scope + where,
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
export async function revokeRule(client: RulesPort, ruleId: string, workspace?: string | null): Promise<RuleInfo> {
  const { revoked } = await client.request<{ revoked: RuleInfo }>(
    Requests.revokeRule,
    workspace ? { ruleId, workspace } : { ruleId },
  );
  return revoked;
}

/** Where a setting can live, as `vscode.ConfigurationTarget` numbers it. */
export const Target = { Global: 1, Workspace: 2, WorkspaceFolder: 3 } as const;

/** What removing a settings rule needs from the configuration. */
export interface SettingsPort {
  inspect(key: string): { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined;
  update(key: string, value: unknown, target: number): Thenable<void> | Promise<void>;
}

function sameRule(entry: SettingsRule, rule: RuleInfo): boolean {
  return entry.tool === rule.tool && entry.decision === rule.decision && (entry.pattern ?? null) === (rule.value ?? null);
}

/**
 * Remove the `openprogram.rules` entry a settings rule came from, at every level that holds it
 * (the server hears the change through the configuration sync and drops the rule at once).
 * Returns the levels changed; none when no entry matches.
 */
export async function removeSettingsRule(cfg: SettingsPort, rule: RuleInfo): Promise<number[]> {
  const seen = cfg.inspect('rules');
  const changed: number[] = [];
  const levels: [number, unknown][] = [
    [Target.WorkspaceFolder, seen?.workspaceFolderValue],
    [Target.Workspace, seen?.workspaceValue],
    [Target.Global, seen?.globalValue],
  ];
  for (const [target, value] of levels) {
    if (!Array.isArray(value)) continue;
    const kept = value.filter((e) => !(isSettingsRule(e) && sameRule(e, rule)));
    if (kept.length === value.length) continue;
    await cfg.update('rules', kept.length ? kept : undefined, target);
    // a remote window may write elsewhere than it reads: count only what is really gone
    const after = cfg.inspect('rules');
    const now = target === Target.Global ? after?.globalValue : target === Target.Workspace ? after?.workspaceValue : after?.workspaceFolderValue;
    if (!(Array.isArray(now) && now.some((e) => isSettingsRule(e) && sameRule(e, rule)))) changed.push(target);
  }
  return changed;
}
