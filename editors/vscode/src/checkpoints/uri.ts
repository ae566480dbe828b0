/** The `openprogram-checkpoint:` URI scheme: one side of one file in one checkpoint. */

export const CHECKPOINT_SCHEME = 'openprogram-checkpoint';

export type Side = 'before' | 'after';

export interface CheckpointRef {
  checkpointId: string;
  path: string;
  side: Side;
}

/** The parts of a checkpoint document URI (`/path` plus `cp=` and `side=` in the query). */
export function formatRef(ref: CheckpointRef): { path: string; query: string } {
  const query = new URLSearchParams({ cp: ref.checkpointId, side: ref.side }).toString();
  return { path: `/${ref.path.replace(/^\/+/, '')}`, query };
}

/** Parse a checkpoint document URI's path and query; undefined when malformed. */
export function parseRef(path: string, query: string): CheckpointRef | undefined {
  const q = new URLSearchParams(query);
  const checkpointId = q.get('cp');
  const side = q.get('side');
  if (!checkpointId || (side !== 'before' && side !== 'after')) {
    return undefined;
  }
  return { checkpointId, path: path.replace(/^\/+/, ''), side };
}
