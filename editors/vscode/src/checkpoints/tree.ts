/** The checkpoints tree: sessions → turns → changed files. */
import { Requests, type Checkpoint, type CheckpointFile, type SessionInfo } from '../protocol';
import { traceError } from '../log';
import * as api from '../vscodeapi';
import { SessionTree } from '../sessionTree';
import { checkpointUri } from './content';
import { sessionTitle } from '../branches/label';

export type CheckpointNode =
  | { kind: 'session'; session: SessionInfo }
  | { kind: 'turn'; checkpoint: Checkpoint }
  | { kind: 'file'; checkpoint: Checkpoint; file: CheckpointFile };

const FILE_ICON: Record<string, string> = { added: 'diff-added', modified: 'diff-modified', deleted: 'diff-removed' };

/** A short label for a checkpoint: its message's first line, else its time. */
export function checkpointLabel(cp: Checkpoint): string {
  // Turn checkpoints read "turn <id>: <user message>"; the message is what a person recognises.
  const first = (cp.message || '').split('\n')[0].trim().replace(/^turn \S+:\s*/, '');
  return first || cp.createdAt || cp.id.slice(0, 8);
}

/** The diff editor's title for one file of a checkpoint. */
export function diffTitle(cp: Checkpoint, path: string): string {
  return `${path} (${checkpointLabel(cp)})`;
}

/** Provides the `openprogram.checkpoints` view. */
export class CheckpointTree extends SessionTree<CheckpointNode> {
  getTreeItem(node: CheckpointNode): api.TreeItem {
    switch (node.kind) {
      case 'session': {
        const current = node.session.id === this.currentSession();
        const item = new api.TreeItem(
          sessionTitle(node.session),
          current ? api.TreeItemCollapsibleState.Expanded : api.TreeItemCollapsibleState.Collapsed,
        );
        item.id = `s:${node.session.id}`;
        item.description = current ? 'current' : node.session.updatedAt;
        item.iconPath = new api.ThemeIcon('comment-discussion');
        item.contextValue = 'session';
        return item;
      }
      case 'turn': {
        const cp = node.checkpoint;
        const item = new api.TreeItem(checkpointLabel(cp), api.TreeItemCollapsibleState.Collapsed);
        item.id = `c:${cp.id}`;
        const n = cp.files.length;
        item.description = `${n} file${n === 1 ? '' : 's'}${cp.kind === 'safety' ? ' · before restore' : ''}${cp.undoneBy ? ' · undone' : ''}`;
        item.tooltip = `${cp.message}\n${cp.createdAt}\ncheckpoint ${cp.id}`;
        item.iconPath = new api.ThemeIcon(cp.kind === 'safety' ? 'shield' : 'history');
        item.contextValue = 'checkpoint';
        return item;
      }
      case 'file': {
        const { checkpoint: cp, file } = node;
        const item = new api.TreeItem(file.path, api.TreeItemCollapsibleState.None);
        item.id = `f:${cp.id}:${file.path}`;
        item.description = file.unsaved ? `${file.status} · unsaved in the editor` : file.status;
        item.iconPath = new api.ThemeIcon(FILE_ICON[file.status] ?? 'file');
        item.contextValue = 'checkpointFile';
        // VS Code's own diff command: its arguments (URIs, a title) go with the row as they are.
        // An extension command with arguments would be cached per refresh by the extension
        // host, and a click landing while the tree refreshes found it gone ("Actual command
        // not found").
        item.command = {
          command: 'vscode.diff',
          title: 'Show Diff',
          arguments: [
            checkpointUri({ checkpointId: cp.id, path: file.path, side: 'before' }),
            checkpointUri({ checkpointId: cp.id, path: file.path, side: 'after' }),
            diffTitle(cp, file.path),
            { preview: true },
          ],
        };
        return item;
      }
    }
  }

  async getChildren(node?: CheckpointNode): Promise<CheckpointNode[]> {
    try {
      if (!node) {
        const { sessions } = await this.client.request<{ sessions: SessionInfo[] }>(Requests.sessions, {});
        const current = this.currentSession();
        const sorted = [...sessions].sort((a, b) => Number(b.id === current) - Number(a.id === current));
        return sorted.map((session) => ({ kind: 'session', session }));
      }
      if (node.kind === 'session') {
        const { checkpoints } = await this.client.request<{ checkpoints: Checkpoint[] }>(Requests.checkpoints, {
          sessionId: node.session.id,
        });
        return checkpoints
          .filter((cp) => cp.files.length > 0 && cp.kind !== 'baseline')
          .map((checkpoint) => ({ kind: 'turn', checkpoint }));
      }
      if (node.kind === 'turn') {
        return node.checkpoint.files.map((file) => ({ kind: 'file', checkpoint: node.checkpoint, file }));
      }
    } catch (err) {
      traceError('checkpoints tree:', err);
    }
    return [];
  }
}
