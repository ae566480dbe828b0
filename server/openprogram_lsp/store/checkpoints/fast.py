"""The fast path of an incremental checkpoint: new trees built in Python from the head tree.

For noted files (no directories, no big files, no file/directory swaps) the blobs and trees
are written here, and the private index is brought level later with one ``git update-index
--index-info`` just before git next reads it; a one-file turn runs no git process at all
(one, ``git check-ignore``, when a file is new).
"""

from __future__ import annotations

import os
import stat

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.store.checkpoints.objects import (
    TREE_MODE,
    TreeChange,
    blob_id,
    diff_trees,
    lookup,
    write_object,
)
from openprogram_lsp.store.checkpoints.stage import Stager
from openprogram_lsp.store.gitobj import MissingObject
from openprogram_lsp.store.gitobj.trees import Leaf, TreeConflict, update_tree


def fast_stage(stager: Stager, head_tree: str, paths: set[str], *,
               scanned: bool = False) -> tuple[str, list[TreeChange]] | None:
    """(new tree, changes) for the noted paths, or None when the general path must run.

    ``scanned`` paths come from ``git status``, which already left ignored files out.
    """
    repo = stager.repo
    limit = repo.config.max_file_bytes
    leaves: dict[str, Leaf] = {}
    data: dict[str, bytes] = {}
    new_files: list[str] = []
    resync: dict[str, Leaf] = {}
    for path in sorted(paths):
        if stager.in_nested(path) or (not scanned and stager.beyond_symlink(path)):
            continue
        if path in repo.large:
            return None
        entry = lookup(repo, head_tree, path)
        full = os.path.join(repo.workspace, path)
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            if entry is not None:
                leaves[path] = None
            elif scanned:  # staged once, never committed, gone now: drop it from the index
                resync[path] = None
            continue
        if stat.S_ISLNK(st.st_mode):
            mode, content = "120000", os.fsencode(os.readlink(full))
        elif stat.S_ISREG(st.st_mode):
            if st.st_size > limit or not os.access(full, os.R_OK):
                return None
            mode = "100755" if st.st_mode & 0o100 else "100644"
            with open(full, "rb") as fh:
                content = fh.read()
        elif stat.S_ISDIR(st.st_mode):
            return None
        else:
            continue  # sockets, fifos: git records none
        sha = blob_id(content)
        if entry == (mode, sha):
            if scanned:  # git saw the index differ from the head here: put the head's back
                resync[path] = entry
            continue
        if entry is not None and entry[0] == TREE_MODE:
            return None
        if entry is None:
            if stager.nested_root(path) is not None:
                continue
            new_files.append(path)
        leaves[path] = (mode, sha)
        data[sha] = content
    if new_files and not scanned:
        for path in stager.ignored(new_files):
            leaves.pop(path, None)
    stager.defer(resync)
    if not leaves:
        return head_tree, []
    for leaf in leaves.values():
        if leaf is not None:
            write_object(repo, "blob", data[leaf[1]])
    try:
        tree = update_tree(repo.odb, head_tree, leaves)
    except TreeConflict:
        return None
    except MissingObject as exc:
        raise CheckpointError(f"checkpoint store is missing object {exc.sha}") from None
    changes = diff_trees(repo, head_tree, tree)
    stager.defer({c.path: None if c.status == "D" else (c.new_mode, c.new_sha) for c in changes})
    if stager.tracked is not None:
        for c in changes:
            if c.status == "D":
                stager.tracked.discard(c.path)
            else:
                stager.tracked.add(c.path)
    return tree, changes
