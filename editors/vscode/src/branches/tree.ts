/** The sessions and branches tree: sessions → branches; clicking one shows it in the chat. */
import { branchLabel, sessionTitle } from './label';
import { Requests, type BranchInfo, type SessionInfo } from '../protocol';
import { traceError } from '../log';
import * as api from '../vscodeapi';
import { SessionTree } from '../sessionTree';

export type BranchNode =
  | { kind: 'session'; session: SessionInfo }
  | { kind: 'branch'; sessionId: string; branch: BranchInfo; all: BranchInfo[] };

/**
 * Provides the `openprogram.branches` view. A click runs `openprogram.openSelectedBranch`
 * without arguments, which reads the view's selection (see commands.ts `clicked`).
 */
export class BranchTree extends SessionTree<BranchNode> {
  getTreeItem(node: BranchNode): api.TreeItem {
    if (node.kind === 'session') {
      const current = node.session.id === this.currentSession();
      const item = new api.TreeItem(
        sessionTitle(node.session),
        current ? api.TreeItemCollapsibleState.Expanded : api.TreeItemCollapsibleState.Collapsed,
      );
      item.id = `s:${node.session.id}`;
      item.description = current ? 'current' : node.session.status;
      item.iconPath = new api.ThemeIcon(current ? 'comment-discussion' : 'comment');
      item.contextValue = 'session';
      item.command = { command: 'openprogram.openSelectedBranch', title: 'Open Session' };
      return item;
    }
    const b = node.branch;
    const item = new api.TreeItem(branchLabel(b, node.all), api.TreeItemCollapsibleState.None);
    item.id = `b:${node.sessionId}:${b.headId}`;
    item.description = `${b.active ? '● ' : ''}${b.length} msgs${b.codeDiffers ? ' · ≠ code' : ''} · ${b.preview}`;
    item.tooltip = b.codeDiffers ? `${b.preview}\n(its code differs from the workspace)` : b.preview;
    item.iconPath = new api.ThemeIcon(b.active ? 'git-branch' : 'git-commit');
    item.contextValue = 'branch';
    item.command = { command: 'openprogram.openSelectedBranch', title: 'Switch Branch' };
    return item;
  }

  async getChildren(node?: BranchNode): Promise<BranchNode[]> {
    try {
      if (!node) {
        const { sessions } = await this.client.request<{ sessions: SessionInfo[] }>(Requests.sessions, {});
        return sessions.map((session) => ({ kind: 'session', session }));
      }
      if (node.kind === 'session') {
        const sessionId = node.session.id;
        const { branches } = await this.client.request<{ branches: BranchInfo[] }>(Requests.branches, { sessionId });
        return branches.map((branch) => ({ kind: 'branch', sessionId, branch, all: branches }));
      }
    } catch (err) {
      traceError('branches tree:', err);
    }
    return [];
  }
}
