"""A walk that found many changed files (the first checkpoint of a big tree): hashed in
process, in parallel, into one pack.

``git add -A`` on a fresh index writes one loose object per file (100,000 files: 100,000
small files in 256 directories), and ``core.bigFileThreshold=1`` (one pack) is slower still at
that size. Here worker threads read, hash and compress the files (file reads and zlib release
the GIL), the main thread appends them to one pack (``gitobj.packwrite``), the changed trees go
into the same pack, and the private index gets the new entries with one ``git update-index
--index-info`` and then its stat data with one ``git update-index --refresh``, so the next walk
hashes nothing. The ignore rules are git's own: the paths come from the walk's ``git status``.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from openprogram_lsp.store.checkpoints.extras import UNREADABLE
from openprogram_lsp.store.checkpoints.modes import EXEC, PLAIN, default_perm
from openprogram_lsp.store.checkpoints.objects import TreeChange, diff_trees
from openprogram_lsp.store.checkpoints.stage import Stager
from openprogram_lsp.store.gitobj.packwrite import PackWriter, pack_record
from openprogram_lsp.store.gitobj.trees import Leaf, TreeConflict, update_tree

CHUNK_FILES = 128
"""Files per worker batch."""
KEEP_BYTES = 256 << 10
"""Files above this size are read by the main thread, so batches in flight stay small."""

Progress = Callable[[int, int], None]
"""Called with (files done, files in all) as the pack fills."""


class Fallback(Exception):
    """Something the bulk path does not handle (the general path takes over)."""


@dataclass(slots=True)
class BulkResult:
    """The new tree, its changes against the parent, and (first checkpoint) the mode table."""

    tree: str
    changes: list[TreeChange]
    modes: dict[str, int] | None


@dataclass(slots=True)
class _Hashed:
    path: str
    kind: str  # file, gone, nested, large, unreadable, dir or other (a socket or fifo)
    leaf: Leaf = None
    binsha: bytes = b""
    record: bytes = b""  # empty for a file too big to keep in a worker's batch
    perm: int | None = None  # permission bits of a regular file


def _workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def _hash_one(root: str, path: str, limit: int, keep: int) -> _Hashed:
    full = os.path.join(root, path)
    try:
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            mode, perm, data = "120000", None, os.fsencode(os.readlink(full))
        elif stat.S_ISREG(st.st_mode):
            if st.st_size > limit:
                return _Hashed(path, "large")
            if st.st_size > keep:
                return _Hashed(path, "file")  # the main thread reads it (bounded memory)
            mode = EXEC if st.st_mode & 0o100 else PLAIN
            perm = stat.S_IMODE(st.st_mode)
            with open(full, "rb") as fh:
                data = fh.read()
        elif stat.S_ISDIR(st.st_mode):
            nested = os.path.lexists(os.path.join(full, ".git"))
            return _Hashed(path, "nested" if nested else "dir")
        else:
            return _Hashed(path, "other")
    except (FileNotFoundError, NotADirectoryError):
        return _Hashed(path, "gone")
    except PermissionError:
        return _Hashed(path, "unreadable")
    binsha, record = pack_record("blob", data)
    return _Hashed(path, "file", (mode, binsha.hex()), binsha, record, perm)


def _hashed(root: str, files: list[str], limit: int) -> Iterator[_Hashed]:
    """Every path hashed by the workers, in order, with a bounded number of batches in flight
    (files above ``KEEP_BYTES`` are read here, one at a time)."""
    workers = _workers()

    def batch(chunk: list[str]) -> list[_Hashed]:
        return [_hash_one(root, p, limit, KEEP_BYTES) for p in chunk]

    with ThreadPoolExecutor(workers, thread_name_prefix="checkpoint-hash") as pool:
        pending: deque[Future[list[_Hashed]]] = deque()
        try:
            for start in range(0, len(files), CHUNK_FILES):
                pending.append(pool.submit(batch, files[start:start + CHUNK_FILES]))
                while len(pending) > 2 * workers:
                    yield from _finish(pending.popleft().result(), root, limit)
            while pending:
                yield from _finish(pending.popleft().result(), root, limit)
        finally:
            for future in pending:
                future.cancel()


def _finish(items: list[_Hashed], root: str, limit: int) -> Iterator[_Hashed]:
    for item in items:
        if item.kind == "file" and item.leaf is None:
            item = _hash_one(root, item.path, limit, limit)
        yield item


def bulk_stage(stager: Stager, parent_tree: str | None, scanned: list[str],
               progress: Progress | None = None) -> BulkResult | None:
    """Record the walk's paths in one pack; None when the general path must run instead (a
    file/directory swap, or entries of an existing checkpoint to drop for a nested repository
    or a file grown too big)."""
    repo = stager.repo
    files = sorted(p for p in set(scanned) if not stager.in_nested(p))
    leaves: dict[str, Leaf] = {}
    perms: dict[str, int] = {}
    state_changed = False
    pack = PackWriter(repo.odb)
    try:
        for done, item in enumerate(_hashed(str(repo.workspace), files,
                                            repo.config.max_file_bytes), 1):
            if item.kind == "file":
                assert item.leaf is not None
                leaves[item.path] = item.leaf
                pack.add_record(item.binsha, item.record)
                if item.perm is not None:
                    perms[item.path] = item.perm
            elif item.kind in ("gone", "other"):
                leaves[item.path] = None
            elif item.kind == "dir" or parent_tree is not None:
                raise Fallback(item.path)
            elif item.kind == "nested":
                repo.nested.add(item.path)
                state_changed = True
            else:  # large, or unreadable
                state_changed |= item.path not in repo.large
                repo.large.add(item.path)
                if item.kind == "unreadable":
                    repo.why[item.path] = UNREADABLE
            if progress is not None and (done % 1000 == 0 or done == len(files)):
                progress(done, len(files))
        tree = update_tree(pack, parent_tree, leaves)
        pack.finish()
    except (Fallback, TreeConflict):
        pack.abort()
        return None
    except BaseException:
        pack.abort()
        raise
    finally:
        if state_changed:
            repo.save_state()
            repo.write_excludes()
    changes = diff_trees(repo, parent_tree, tree) if parent_tree is not None else []
    stager.defer(leaves)
    stager.refresh()
    stager.tracked = None
    modes = None
    if parent_tree is None:  # every file was read: the whole mode table is known
        modes = {}
        for path, perm in perms.items():
            leaf = leaves.get(path)
            if leaf is not None and perm != default_perm(leaf[0]):
                modes[path] = perm
    return BulkResult(tree, changes, modes)
