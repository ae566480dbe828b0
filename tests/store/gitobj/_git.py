"""A git command in a test repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from openprogram_lsp.store.git import git_env


def git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    """``git -C repo args`` with an identity, its stdout (fails on a non-zero exit)."""
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], env=git_env(), input=input, capture_output=True,
                          check=True).stdout
