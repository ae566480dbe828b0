"""A walk that found many changed files (the first checkpoint of a big tree): hashed into one
pack by a child process.

``git add -A`` on a fresh index writes one loose object per file (100,000 files: 100,000
small files in 256 directories), and ``core.bigFileThreshold=1`` (one pack) is slower still at
that size. Here a child process (``gitobj.filepack``) reads, hashes and compresses the files
on worker threads, appends them to one pack with the changed trees, and lists the private
index's new entries; the walking thread gives those to one ``git update-index --index-info``
and then fills in their stat data with one ``git update-index --refresh``, so the next walk
hashes nothing. In the server's own process that hashing held the GIL for seconds against the
event loop (a turn's edit during the walk took 5-20 times its usual time). The ignore rules
are git's own: the paths come from the walk's ``git status``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from openprogram_lsp.store.checkpoints.extras import UNREADABLE
from openprogram_lsp.store.checkpoints.modes import EXEC, PLAIN, default_perm
from openprogram_lsp.store.checkpoints.objects import TreeChange, diff_trees
from openprogram_lsp.store.checkpoints.stage import Stager
from openprogram_lsp.store.gitobj.filepack import pack_files

Progress = Callable[[int, int], None]
"""Called with (files done, files in all) as the pack fills."""


@dataclass(slots=True)
class BulkResult:
    """The new tree, its changes against the parent, and (first checkpoint) the mode table
    and the tree's files."""

    tree: str
    changes: list[TreeChange]
    modes: dict[str, int] | None
    files: list[str] | None = None


def bulk_stage(stager: Stager, parent_tree: str | None, scanned: list[str],
               progress: Progress | None = None) -> BulkResult | None:
    """Record the walk's paths in one pack; None when the general path must run instead (a
    file/directory swap, or entries of an existing checkpoint to drop for a nested repository
    or a file grown too big)."""
    repo = stager.repo
    files = sorted(p for p in set(scanned) if not stager.in_nested(p))
    defaults = {EXEC: default_perm(EXEC), PLAIN: default_perm(PLAIN)}
    stager.flush()
    packed = pack_files(repo.odb, str(repo.workspace), parent_tree, files,
                        repo.config.max_file_bytes, defaults, progress)
    if parent_tree is None:  # (with a parent tree, the first such path made it stop)
        state_changed = False
        for path, kind in packed.odd.items():
            if kind == "nested":
                repo.nested.add(path)
                state_changed = True
            elif kind in ("large", "unreadable"):
                state_changed |= path not in repo.large
                repo.large.add(path)
                if kind == "unreadable":
                    repo.why[path] = UNREADABLE
        if state_changed:
            repo.save_state()
            repo.write_excludes()
    if packed.tree is None:
        return None
    changes = diff_trees(repo, parent_tree, packed.tree) if parent_tree is not None else []
    if packed.index_info:
        repo.git(["update-index", "-z", "--index-info"], input=packed.index_info)
    stager.refresh()
    stager.tracked = None
    if parent_tree is not None:
        return BulkResult(packed.tree, changes, None)
    # every file was read: the whole mode table is known, and the tree's files
    return BulkResult(packed.tree, changes, packed.perms,
                      [p for p in files if p not in packed.odd])
