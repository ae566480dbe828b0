"""Confinement of tool paths to the workspace root."""

from __future__ import annotations

import os
from pathlib import Path

from openprogram_lsp.core.errors import WorkspaceEscape


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """Resolve a workspace-relative path; refuse absolute paths, ``..`` and symlink escapes."""
    if not path or path.strip() == "":
        raise WorkspaceEscape("path is empty")
    if "\x00" in path:
        raise WorkspaceEscape(f"path {path!r} contains a NUL byte")
    if os.path.isabs(path) or path.startswith("~"):
        raise WorkspaceEscape(f"path {path!r} is absolute; use a path relative to the workspace")
    parts = Path(path).parts
    if ".." in parts:
        raise WorkspaceEscape(f"path {path!r} leads outside the workspace")
    root = workspace.resolve()
    try:
        target = (root / path).resolve()
    except OSError as exc:  # e.g. a component replaced while it was being read
        raise WorkspaceEscape(f"path {path!r} could not be resolved: {exc.strerror}") from None
    if target != root and root not in target.parents:
        raise WorkspaceEscape(f"path {path!r} leads outside the workspace (through a symlink)")
    if ".git" in Path(os.path.relpath(target, root)).parts:
        raise WorkspaceEscape(f"path {path!r} is inside a .git directory, which tools never touch")
    return target


def relative(workspace: Path, target: Path) -> str:
    """The workspace-relative form of an absolute path, with forward slashes."""
    return Path(os.path.relpath(target, workspace.resolve())).as_posix()


def confined(workspace: Path, path: str) -> str:
    """A tool path checked by ``resolve_in_workspace``, as the relative path to walk.

    Every file tool passes its path through here and then through ``core.fdfs``, which walks
    it component by component from the root's descriptor: the check refuses what is statically
    outside, the walk refuses what changes under it.
    """
    target = resolve_in_workspace(workspace, path)
    return relative(workspace, target)
