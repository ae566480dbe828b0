"""Which checkpoint last changed each line of a file: ``git blame --incremental`` over the
private store, with restores followed back to the checkpoint whose lines they brought back.

A restore (a branch switch, an undo) rewrites lines that an earlier turn wrote, possibly on
another branch; git blames them on the restore commit. Those lines are mapped into the file as
the restored checkpoint (or, for a hunk or an undo, its parent) had it, and blamed there, so
they keep the turn that wrote them. Blames of a commit are immutable and memoised; the blame of
the current text is cached by (head, path, content hash) by the caller.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.checkpoints.hunks import blob_hunks, unchanged_runs
from openprogram_lsp.store.checkpoints.meta import CommitMeta
from openprogram_lsp.store.checkpoints.objects import commit_tree, lookup, read_blobs
from openprogram_lsp.store.checkpoints.shadow import ShadowRepo

Kind = Literal["agent", "user", "base", "unrecorded"]
_ENTRY = re.compile(rb"^([0-9a-f]{40}) (\d+) (\d+) (\d+)$")
_ZERO = "0" * 40
MAX_DEPTH = 8
Metas = dict[str, tuple[CommitMeta | None, str | None]]
"""commit -> (its checkpoint metadata, its parent commit)."""
_MEMO_MAX = 512


@dataclass(frozen=True, slots=True)
class Owner:
    """Who last changed a line: a checkpoint commit and what kind of change it was.

    ``agent``: a turn's checkpoint; ``user``: a change made outside the agent (recorded by a
    baseline, safety or restore checkpoint); ``base``: the workspace as the first checkpoint
    found it; ``unrecorded``: the line differs from the newest checkpoint (an edit since).
    ``line`` is the line's 0-based number in the file as that commit has it.
    """

    kind: Kind
    commit: str | None = None
    line: int = 0


def _parse(out: bytes) -> list[tuple[str, int, int, int]]:
    """(commit, orig line, final line, count) entries, 1-based as git prints them."""
    rows = []
    for line in out.split(b"\n"):
        m = _ENTRY.match(line)
        if m:
            rows.append((m.group(1).decode(), int(m.group(2)), int(m.group(3)),
                         int(m.group(4))))
    return rows


class LineBlame:
    """Blames of one workspace's checkpoint store (thread-safe)."""

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._memo: OrderedDict[tuple[str, str], list[Owner]] = OrderedDict()
        self._restored: OrderedDict[tuple[str, str], dict[int, Owner]] = OrderedDict()
        self._metas: tuple[str | None, Metas] = (None, {})
        self._ids: dict[str, str] = {}

    # -- metadata of the chain ---------------------------------------------------------------

    def metas(self) -> Metas:
        """commit -> (its checkpoint metadata, its parent commit), for the current chain."""
        head = self.store.head()
        if self._metas[0] != head:
            with self.store.lock:
                self.store._open()
                entries = self.store._entries()
            self._metas = (head, {e.commit: (e.meta, e.parent) for e in entries})
            self._ids = {e.meta.id: e.commit for e in entries if e.meta is not None}
        return self._metas[1]

    def _kind(self, commit: str, metas: Metas) -> Kind:
        meta, parent = metas.get(commit, (None, None))
        if meta is None or meta.kind == "base" or (meta.kind == "baseline" and parent is None):
            return "base"
        return "agent" if meta.kind == "turn" else "user"

    # -- blame -------------------------------------------------------------------------------

    def current(self, path: str, text: bytes) -> list[Owner] | None:
        """Owners of each line of ``text`` (the file as it is now); None when no checkpoint
        ever recorded the path."""
        if self.store.head() is None:
            return None
        # no revision: the private HEAD is the checkpoint ref (git before 2.41 refuses
        # --contents with a revision)
        args = ["blame", "--incremental", "--contents", "-", "--", path]
        rc, out, err = self.store.repo.git_rc(args, input=text)
        if rc != 0 and "no such path" not in err:
            # maybe git's read of the ref raced its in-place write (a mix of two ids names no
            # commit): again, with no writer
            with self.store.lock:
                rc, out, _err = self.store.repo.git_rc(args, input=text)
        if rc != 0:
            return None
        count = len(text.splitlines())
        return self._resolve(path, _parse(out), count, 0, self.metas())

    def at(self, commit: str, path: str, depth: int = 0) -> list[Owner]:
        """Owners of each line of ``path`` as ``commit`` has it (memoised: commits never
        change)."""
        key = (commit, path)
        with self._lock:
            hit = self._memo.get(key)
            if hit is not None:
                self._memo.move_to_end(key)
                return hit
        rc, out, _err = self.store.repo.git_rc(["blame", "--incremental", commit, "--", path])
        owners = self._resolve(path, _parse(out), None, depth, self.metas()) if rc == 0 else []
        with self._lock:
            self._memo[key] = owners
            while len(self._memo) > _MEMO_MAX:
                self._memo.popitem(last=False)
        return owners

    def _resolve(self, path: str, rows: list[tuple[str, int, int, int]], count: int | None,
                 depth: int, metas: Metas) -> list[Owner]:
        size = count if count is not None else max((f + n - 1 for _, _, f, n in rows),
                                                   default=0)
        owners = [Owner("unrecorded")] * size
        for commit, orig, final, n in rows:
            for k in range(n):
                if final - 1 + k < size:
                    owners[final - 1 + k] = self._owner(commit, path, orig - 1 + k, depth,
                                                        metas)
        return owners

    def _owner(self, commit: str, path: str, line: int, depth: int, metas: Metas) -> Owner:
        if commit == _ZERO:
            return Owner("unrecorded")
        meta, _parent = metas.get(commit, (None, None))
        if meta is not None and meta.kind == "restore" and meta.restored_from \
                and depth < MAX_DEPTH:
            found = self._restore_map(commit, meta.restored_from, path, depth).get(line)
            if found is not None:
                return found
        return Owner(self._kind(commit, metas), commit, line)

    def _restore_map(self, commit: str, restored_from: str, path: str,
                     depth: int) -> dict[int, Owner]:
        """Line of a restore commit's file -> its owner where the restore took it from."""
        key = (commit, path)
        with self._lock:
            hit = self._restored.get(key)
        if hit is not None:
            return hit
        out: dict[int, Owner] = {}
        mine = self._blob(commit, path)
        for source in self._sources(restored_from) if mine else []:
            theirs = self._blob(source, path)
            if theirs is None or mine is None:
                continue
            owners = self.at(source, path, depth + 1)
            try:  # git's diff, bounded on any text (difflib is quadratic on repeated lines)
                runs = unchanged_runs(blob_hunks(self.store.repo, theirs, mine),
                                      _line_count(self.store.repo, theirs))
            except CheckpointError:
                continue
            for b, a, size in runs:
                for k in range(size):
                    if a + k not in out and b + k < len(owners):
                        out[a + k] = owners[b + k]
        with self._lock:
            self._restored[key] = out
            while len(self._restored) > _MEMO_MAX:
                self._restored.popitem(last=False)
        return out

    def _sources(self, checkpoint_id: str) -> list[str]:
        """The commit of a restored checkpoint, then its parent (a hunk restore or an undo
        brings back the lines from before it)."""
        self.metas()
        commit = self._ids.get(checkpoint_id)
        if commit is None:
            return []
        parent = self.metas().get(commit, (None, None))[1]
        return [commit, *([parent] if parent else [])]

    def _blob(self, commit: str, path: str) -> str | None:
        """The blob of ``path`` (a regular file) at ``commit``."""
        repo = self.store.repo
        try:
            entry = lookup(repo, commit_tree(repo, commit), path)
        except CheckpointError:
            return None
        if entry is None or entry[0] not in ("100644", "100755"):
            return None
        return entry[1]


def _line_count(repo: ShadowRepo, blob: str) -> int:
    """Lines of a blob as git counts them (``\\n`` ends one; a last line may lack it)."""
    data = read_blobs(repo, [blob])[blob]
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
