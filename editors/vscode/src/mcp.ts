/** The MCP servers quick pick: items and actions (pure, so it tests without VS Code). */
import type { McpServerInfo } from './protocol';

export type McpAction = 'restart' | 'revokeTrust' | 'tools';

export interface McpServerItem {
  label: string;
  description: string;
  detail: string;
  server: McpServerInfo;
}

export interface McpActionItem {
  label: string;
  action: McpAction;
}

const ICON: Record<McpServerInfo['status'], string> = {
  ready: '$(pass)',
  starting: '$(loading~spin)',
  restarting: '$(loading~spin)',
  stopped: '$(circle-outline)',
  untrusted: '$(shield)',
  denied: '$(circle-slash)',
  failed: '$(error)',
  invalid: '$(warning)',
};

/** One quick-pick row per server: name, status and tools; the detail says where and why. */
export function serverItem(s: McpServerInfo): McpServerItem {
  const trust = s.trust ? ` · trust ${s.trust}` : '';
  const error = s.lastError ? ` · ${s.lastError}` : '';
  return {
    label: `${ICON[s.status] ?? ''} ${s.name}`.trim(),
    description: `${s.status} · ${s.tools.length} tool${s.tools.length === 1 ? '' : 's'}${trust}`,
    detail: `${s.origin} · ${s.transport} · ${s.target}${error}`,
    server: s,
  };
}

/** What can be done with a server (revoking trust only for a `.mcp.json` one). */
export function actionsFor(s: McpServerInfo): McpActionItem[] {
  const out: McpActionItem[] = [{ label: '$(debug-restart) Restart', action: 'restart' }];
  if (s.tools.length || s.prompts.length || s.resources.length) {
    out.push({ label: '$(tools) Show tools, prompts and resources', action: 'tools' });
  }
  if (s.origin === 'workspace' && s.trust && s.trust !== 'unknown') {
    out.push({ label: '$(shield) Revoke trust (ask again before it starts)', action: 'revokeTrust' });
  }
  return out;
}

/** The tools, prompts (`/mcp__server__prompt`) and resources (`@server:uri`) of a server. */
export function offerLines(s: McpServerInfo): string[] {
  return [
    ...s.tools.map((t) => `${t.name} [${t.kind}] ${t.description}`.trim()),
    ...s.prompts.map((p) => `${p.command} ${p.arguments.join(' ')} (prompt) ${p.description}`.trim()),
    ...s.resources.map((r) => `${r.reference} (resource)`),
  ];
}

/** The text of an approval asked by notification: an MCP call names server, tool and arguments. */
export function approvalMessage(tc: { title: string; name: string; input: Record<string, unknown>; mcp?: { server: string; tool: string; description?: string | null } | null }): string {
  const title = tc.title || tc.name;
  if (!tc.mcp) return `OpenProgram: allow ${title}?`;
  const about = tc.mcp.description ? ` (the server says: ${tc.mcp.description})` : '';
  return `OpenProgram: allow MCP server ${tc.mcp.server}, tool ${tc.mcp.tool}${about}, with arguments ${JSON.stringify(tc.input)}?`;
}
