"""A turn's workspace resolved once: its real path, and the directory every open must find.

A turn asks for its workspace's real path a dozen times (rule books, hooks, agent
definitions, MCP spaces, instructions, the checkpointer, each tool path's check). Inside
``resolved(workspace)`` they share one ``realpath`` and the directory's identity
(device, inode) taken with it. ``core.fdfs`` opens the workspace by the path it was given
(maybe a symlink) and checks that identity on the descriptor: a workspace re-pointed
mid-turn is refused there, so no tool reaches a directory its path checks never saw.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from openprogram_lsp.core.errors import WorkspaceEscape

_Root = tuple[str, str, tuple[int, int]]  # (path as given, its real path, (st_dev, st_ino))
_root: ContextVar[_Root | None] = ContextVar("op_turn_root", default=None)


@contextmanager
def resolved(workspace: Path | str) -> Iterator[str]:
    """Within the block (a turn) ``real_path(workspace)`` is the real path resolved here and
    ``check_root`` holds descriptors of it to this directory. Yields the real path."""
    given = os.fspath(workspace)
    real = os.path.realpath(given)
    try:
        st = os.stat(real)
    except OSError:  # no such directory (yet): nothing to remember, every lookup resolves
        yield real
        return
    token = _root.set((given, real, (st.st_dev, st.st_ino)))
    try:
        yield real
    finally:
        _root.reset(token)


def real_path(path: Path | str) -> str:
    """``os.path.realpath(path)``, resolved once per turn for the turn's workspace."""
    given = os.fspath(path)
    held = _root.get()
    if held is not None and (given == held[0] or given == held[1]):
        return held[1]
    return os.path.realpath(given)


def check_root(path: Path | str, fd: int) -> None:
    """Refuse a descriptor of the turn's workspace that is not the directory resolved at the
    turn's start (the workspace was a symlink and was re-pointed, or was replaced)."""
    held = _root.get()
    if held is None:
        return
    given = os.fspath(path)
    if given != held[0] and given != held[1]:
        return
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != held[2]:
        raise WorkspaceEscape(f"the workspace {given!r} is no longer the directory "
                              f"{held[1]!r} this turn started in (it was re-pointed or "
                              "replaced); the turn touches nothing there")
