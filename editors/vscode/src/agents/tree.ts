/** The subagents tree: the current session's subagent runs; clicking one checks out its branch. */
import { Requests, type AgentInfo, type EventParams } from '../protocol';
import { traceError } from '../log';
import * as api from '../vscodeapi';
import { SessionTree } from '../sessionTree';

export interface AgentNode {
  kind: 'agent';
  agent: AgentInfo;
}

const STATUS_ICON: Record<AgentInfo['status'], string> = {
  running: 'sync~spin',
  done: 'pass',
  error: 'error',
  cancelled: 'circle-slash',
  truncated: 'warning',
  refused: 'circle-slash',
};

/** Whether an event changes the list of subagents. */
export function affectsAgents(e: EventParams): boolean {
  return e.type === 'subagent.started' || e.type === 'subagent.ended';
}

/** The label, description and tooltip of one run, without the vscode API (tested directly). */
export function describeAgent(a: AgentInfo): { label: string; description: string; tooltip: string } {
  const label = a.label || a.id;
  const what = a.kind === 'message' ? 'message · ' : '';
  const status = a.queued ? 'queued' : a.status;
  const lines = [`${label} (${a.kind ?? 'agent'}, ${status})`];
  if (a.error) lines.push(a.error);
  if (a.headId) lines.push('Click to check out its branch.');
  return { label, description: `${what}${status}`, tooltip: lines.join('\n') };
}

/** Provides the `openprogram.agents` view. */
export class AgentTree extends SessionTree<AgentNode> {
  getTreeItem(node: AgentNode): api.TreeItem {
    const a = node.agent;
    const { label, description, tooltip } = describeAgent(a);
    const item = new api.TreeItem(label, api.TreeItemCollapsibleState.None);
    item.id = `a:${a.sessionId}:${a.id}`;
    item.description = description;
    item.tooltip = tooltip;
    item.iconPath = new api.ThemeIcon(a.kind === 'message' && a.status !== 'running' ? 'mail' : STATUS_ICON[a.status] ?? 'circle-outline');
    item.contextValue = 'agent';
    if (a.headId) {
      // no arguments: the command reads the view's selection (see commands.ts `clicked`)
      item.command = { command: 'openprogram.openSelectedAgent', title: 'Check Out Subagent Branch' };
    }
    return item;
  }

  async getChildren(node?: AgentNode): Promise<AgentNode[]> {
    const sessionId = this.currentSession();
    if (node || !sessionId) {
      return [];
    }
    try {
      const { agents } = await this.client.request<{ agents: AgentInfo[] }>(Requests.agents, { sessionId });
      return agents.map((agent) => ({ kind: 'agent', agent }));
    } catch (err) {
      traceError('subagents tree:', err);
      return [];
    }
  }
}
