"""Exact file modes: git trees keep only 644 or 755, so the rest (0600, 0640, setgid...) is
kept in each checkpoint's trailers, as the whole table of files whose mode is not the default.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from openprogram_lsp.core.fsutil import current_umask

EXEC, PLAIN = "100755", "100644"


def default_perm(git_mode: str) -> int:
    """The permission bits a file of this git mode gets when written under our umask."""
    return (0o777 if git_mode == EXEC else 0o666) & ~current_umask()


def perm_on_disk(full: str) -> tuple[str, int] | None:
    """(git mode, permission bits) of a regular file, or None for anything else."""
    try:
        st = os.lstat(full)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (EXEC if st.st_mode & 0o100 else PLAIN), stat.S_IMODE(st.st_mode)


def update_modes(workspace: str, table: dict[str, int], paths: Iterable[str]) -> dict[str, int]:
    """``table`` with the given workspace paths re-read from disk (one ``lstat`` each: a walk
    re-reads every file, so this loop is kept lean)."""
    out = dict(table)
    prefix = workspace if workspace.endswith("/") else workspace + "/"
    umask = current_umask()
    exec_default, plain_default = 0o777 & ~umask, 0o666 & ~umask
    lstat, is_reg = os.lstat, stat.S_ISREG
    for path in paths:
        try:
            mode = lstat(prefix + path).st_mode
        except OSError:
            out.pop(path, None)
            continue
        perm = mode & 0o7777
        if is_reg(mode) and perm != (exec_default if mode & 0o100 else plain_default):
            out[path] = perm
        else:
            out.pop(path, None)
    return out


def wanted_perm(table: dict[str, int], path: str, git_mode: str) -> int:
    """The permission bits a restored file must get."""
    return table.get(path, default_perm(git_mode))
