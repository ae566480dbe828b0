"""Which of a few recorded files differ on disk from the head checkpoint, in process.

A restore first makes sure its safety checkpoint holds the current bytes of every file it may
write: files that differ between the head and the restored checkpoint are re-read anyway, and
a file edited a moment ago, before the watcher said so, must be found too. For a whole tree
that is ``git diff-files`` (stat data, in C); for the few files a restore of some paths names
it is cheaper to compare each with the head tree's blob here: one ``lstat`` and, for a regular
file, one read and a SHA-1 (``gitobj``), with no git process. A file is reported unless it is
surely what the head recorded (same kind, same executable bit, same blob id), so the answer is
never smaller than ``diff-files``' (whose index holds the head's entries); anything this does
not handle (a directory, a symlink, a path the head lacks, a large file) returns None and the
caller asks git.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable
from pathlib import Path

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.errors import ToolError, WorkspaceEscape
from openprogram_lsp.store.gitobj import MissingObject, ObjectDB
from openprogram_lsp.store.gitobj.odb import object_id
from openprogram_lsp.store.gitobj.trees import lookup

MAX_FILES = 64
"""Paths past which git's stat-based check is the cheaper one."""
MAX_BYTES = 8 << 20
"""A file larger than this is left to git (which checks stat data before reading)."""
GITLINK = "160000"


def modified_files(workspace: Path, odb: ObjectDB, tree: str, paths: Iterable[str]
                   ) -> list[str] | None:
    """The ``paths`` (files recorded in ``tree``) whose disk state differs from it, or None
    when some path is not a plain recorded file (the caller runs ``git diff-files``)."""
    todo = list(dict.fromkeys(paths))
    if len(todo) > MAX_FILES:
        return None
    out: list[str] = []
    for path in todo:
        try:
            entry = lookup(odb, tree, path)
        except MissingObject:
            return None
        if entry is None or entry[0] not in ("100644", "100755", GITLINK):
            return None  # not recorded, a directory or a symlink: git knows best
        if entry[0] == GITLINK:
            continue  # a nested repository (``--ignore-submodules=all``)
        changed = _differs(workspace, path, entry[0], entry[1])
        if changed is None:
            return None
        if changed:
            out.append(path)
    return out


def _differs(workspace: Path, path: str, mode: str, sha: str) -> bool | None:
    try:
        st = fdfs.lstat(workspace, path)
        if st is None or not stat.S_ISREG(st.st_mode):
            return True  # deleted, or something else in its place
        if ("100755" if st.st_mode & stat.S_IXUSR else "100644") != mode:
            return True
        if st.st_size > MAX_BYTES:
            return None
        data, size = fdfs.read_bytes(workspace, path, MAX_BYTES + 1)
    except (WorkspaceEscape, ToolError, OSError):
        return True  # unreadable or swapped meanwhile: reported, the safety commit decides
    if size != len(data):
        return True  # changing while read
    return object_id("blob", data) != sha
