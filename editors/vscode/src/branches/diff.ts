/** Comparing two branches' code: `openprogram/branchDiff` results served to VS Code's
 * multi-file diff editor under the `openprogram-branch:` scheme. */
import type { BranchDiffResult } from '../protocol';
import * as api from '../vscodeapi';

export const BRANCH_SCHEME = 'openprogram-branch';

/** The URI of one side of a file in a stored comparison. */
export function branchUri(key: string, path: string, side: 'before' | 'after'): api.Uri {
  const query = new URLSearchParams({ k: key, side }).toString();
  return api.Uri.from({ scheme: BRANCH_SCHEME, path: `/${path.replace(/^\/+/, '')}`, query });
}

/** Holds comparisons (by key) and answers their documents. */
export class BranchDiffContent implements api.TextDocumentContentProvider {
  private readonly results = new Map<string, BranchDiffResult>();

  /** Keep a comparison; returns its key. */
  put(result: BranchDiffResult): string {
    const key = `${result.fromCheckpointId.slice(0, 12)}..${result.toCheckpointId.slice(0, 12)}`;
    this.results.set(key, result);
    return key;
  }

  provideTextDocumentContent(uri: api.Uri): string {
    const q = new URLSearchParams(uri.query);
    const file = this.results.get(q.get('k') ?? '')?.files.find((f) => f.path === uri.path.replace(/^\/+/, ''));
    return (q.get('side') === 'before' ? file?.before : file?.after) ?? '';
  }
}

/** The (resource, left, right) triples of the multi-file diff editor. */
export function changes(key: string, result: BranchDiffResult): [api.Uri, api.Uri, api.Uri][] {
  return result.files.map((f) => [branchUri(key, f.path, 'after'), branchUri(key, f.path, 'before'), branchUri(key, f.path, 'after')]);
}
