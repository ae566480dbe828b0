/** What the three side-bar trees share: the client, the current session and a refresh event. */
import type { AgentPort } from './client';
import * as api from './vscodeapi';

export abstract class SessionTree<T> implements api.TreeDataProvider<T> {
  private readonly changed = new api.EventEmitter<T | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    protected readonly client: AgentPort,
    protected readonly currentSession: () => string | null,
  ) {}

  /** Redraw the whole tree. */
  refresh(): void {
    this.changed.fire(undefined);
  }

  dispose(): void {
    this.changed.dispose();
  }

  abstract getTreeItem(node: T): api.TreeItem;
  abstract getChildren(node?: T): Promise<T[]>;
}
