"""Checks on a session's repository made with real git (the store itself runs none)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from openprogram_lsp.store.git import run_git


def uncommitted(root: Path) -> bytes:
    """``git status --porcelain`` of a session against its head commit (empty: all committed).

    The store keeps no git index, so git's view of the head is read into a throwaway one.
    """
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        run_git(["read-tree", "HEAD"], cwd=root, env=env)
        return run_git(["status", "--porcelain", "--untracked-files=all"], cwd=root, env=env)
