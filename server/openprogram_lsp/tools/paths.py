"""Confinement of tool paths: inside the workspace, never in ``.git``, never in our own state.

``resolve_in_workspace`` is the one check every file tool, ``grep``, ``list_dir`` and restore
goes through; ``refuse_protected`` is its last step, for callers that walk a tree themselves.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from openprogram_lsp.core.errors import WorkspaceEscape
from openprogram_lsp.core.fdfs import is_git_name
from openprogram_lsp.core.fsutil import protected_dir_of, protected_dirs, protected_real_of
from openprogram_lsp.core.turn_root import real_path

STATE_REFUSAL = ("is inside openprogram-lsp's own state directory ({root}), which tools never "
                 "read or change")


def is_protected(target: Path, workspace: Path) -> bool:
    """Whether a path lies in a directory our own stores live in (the state root, sessions,
    checkpoints, rules), seen from this workspace."""
    return protected_dir_of(target, workspace) is not None


def refuse_protected(target: Path, workspace: Path, shown: str) -> None:
    """Raise WorkspaceEscape when ``target`` is inside our own state."""
    try:
        root = protected_dir_of(target, workspace)
    except OSError as exc:  # a component replaced while it was being read: refuse, never guess
        raise WorkspaceEscape(f"path {shown!r} could not be resolved: {exc.strerror}") from None
    if root is not None:
        raise WorkspaceEscape(f"path {shown!r} " + STATE_REFUSAL.format(root=root))


_per_call: ContextVar[dict[tuple[str, str], tuple[str, str]] | None] = ContextVar(
    "op_call_paths", default=None)


@contextmanager
def resolved_once() -> Iterator[None]:
    """Within the block (one tool call: its rule facts, its approval, the tool itself) a path
    is resolved once; each later check of it reuses that. ``core.fdfs`` still walks it from
    the root's descriptor when the tool opens it, so a link changed meanwhile is refused."""
    token = _per_call.set({})
    try:
        yield
    finally:
        _per_call.reset(token)


def _resolved(workspace: Path, path: str) -> tuple[str, str]:
    """(the workspace's real path, the path's real target, inside it), or WorkspaceEscape.

    Each is resolved once (one ``lstat`` per component); every later check compares
    strings."""
    memo = _per_call.get()
    key = (str(workspace), path)
    if memo is not None and key in memo:
        return memo[key]
    found = _resolve(workspace, path)
    if memo is not None:
        memo[key] = found
    return found


def _resolve(workspace: Path, path: str) -> tuple[str, str]:
    if not path or path.strip() == "":
        raise WorkspaceEscape("path is empty")
    if "\x00" in path:
        raise WorkspaceEscape(f"path {path!r} contains a NUL byte")
    if os.path.isabs(path) or path.startswith("~"):
        raise WorkspaceEscape(f"path {path!r} is absolute; use a path relative to the workspace")
    if ".." in path.split("/"):  # refused even when it stays inside: one name per file
        norm = posixpath.normpath(path)
        if norm == ".." or norm.startswith("../"):
            raise WorkspaceEscape(f"path {path!r} leads outside the workspace")
        raise WorkspaceEscape(f"path {path!r} has a '..' component; name it as {norm!r}")
    try:
        root = real_path(workspace)  # once per turn; core.fdfs checks the directory it opens
        target = os.path.realpath(os.path.join(root, path))
    except OSError as exc:  # e.g. a component replaced while it was being read
        raise WorkspaceEscape(f"path {path!r} could not be resolved: {exc.strerror}") from None
    top = root if root.endswith(os.sep) else root + os.sep
    if target != root and not target.startswith(top):
        raise WorkspaceEscape(f"path {path!r} leads outside the workspace (through a symlink)")
    if any(is_git_name(part) for part in target[len(top):].split(os.sep)):
        raise WorkspaceEscape(f"path {path!r} is inside a .git directory, which tools never touch")
    found = protected_real_of(target, root)
    if found is not None:
        raise WorkspaceEscape(f"path {path!r} " + STATE_REFUSAL.format(root=found))
    return root, target


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """Resolve a workspace-relative path; refuse absolute paths, ``..``, symlink escapes,
    ``.git`` and the state root."""
    return Path(_resolved(workspace, path)[1])


def relative(workspace: Path, target: Path) -> str:
    """The workspace-relative form of an absolute path, with forward slashes."""
    return Path(os.path.relpath(target, real_path(workspace))).as_posix()


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def plain_name(path: str) -> str:
    """A path a tool writes to, refused when it holds a control character (a newline, a tab,
    an escape…): such a name breaks every listing, diff and command that shows it."""
    bad = _CONTROL.search(path)
    if bad is not None:
        raise ValueError(f"control character {bad.group()!r} in the file name; names with "
                         "newlines, tabs or other control characters are refused")
    return path


WritePath = Annotated[str, AfterValidator(plain_name)]
"""A path argument of a tool that creates or changes files (pydantic checks ``plain_name``)."""


def confined(workspace: Path, path: str) -> str:
    """A tool path checked by ``resolve_in_workspace``, as the relative path to walk.

    Every file tool passes its path through here and then through ``core.fdfs``, which walks
    it component by component from the root's descriptor: the check refuses what is statically
    outside, the walk refuses what changes under it.
    """
    root, target = _resolved(workspace, path)
    if target == root:
        return "."
    rel = target[len(root) + (0 if root.endswith(os.sep) else 1):]
    return rel if os.sep == "/" else rel.replace(os.sep, "/")


def protected_below(workspace: Path, rel: str) -> list[str]:
    """Our own state directories inside workspace-relative directory ``rel``, relative to it
    (what a tree walk such as grep's must leave out)."""
    root = workspace.resolve()
    base = (root / rel).resolve() if rel not in ("", ".") else root
    out = []
    for d in protected_dirs():
        if base in d.parents and protected_dir_of(d, root) is not None:
            out.append(Path(os.path.relpath(d, base)).as_posix())
    return out
