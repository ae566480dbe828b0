/** Serves checkpoint file contents for VS Code's diff editor. */
import type { AgentPort } from '../client';
import { Requests, type CheckpointDiffResult } from '../protocol';
import { CHECKPOINT_SCHEME, formatRef, parseRef, type CheckpointRef } from './uri';
import * as api from '../vscodeapi';

/** Build the URI of one side of a file in a checkpoint. */
export function checkpointUri(ref: CheckpointRef): api.Uri {
  const { path, query } = formatRef(ref);
  return api.Uri.from({ scheme: CHECKPOINT_SCHEME, path, query });
}

/** Answers `openprogram-checkpoint:` documents from `openprogram/checkpointDiff`. */
export class CheckpointContentProvider implements api.TextDocumentContentProvider {
  private readonly cache = new Map<string, Promise<CheckpointDiffResult>>();

  constructor(private readonly client: AgentPort) {}

  /** Fetch (once per checkpoint and path) the diff result. */
  diff(checkpointId: string, path?: string): Promise<CheckpointDiffResult> {
    const key = `${checkpointId}\u0000${path ?? ''}`;
    let p = this.cache.get(key);
    if (!p) {
      const params = path ? { checkpointId, path } : { checkpointId };
      p = this.client.request<CheckpointDiffResult>(Requests.checkpointDiff, params);
      p.catch(() => this.cache.delete(key));
      this.cache.set(key, p);
    }
    return p;
  }

  async provideTextDocumentContent(uri: api.Uri): Promise<string> {
    const ref = parseRef(uri.path, uri.query);
    if (!ref) {
      return '';
    }
    const result = await this.diff(ref.checkpointId, ref.path);
    const file = result.files.find((f) => f.path === ref.path);
    return (ref.side === 'before' ? file?.before : file?.after) ?? '';
  }
}
