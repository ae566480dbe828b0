"""read_ref answers what git itself resolves, loose or packed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from openprogram_lsp.store.gitobj.refs import read_ref


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def test_loose_packed_and_missing_refs(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    _git(tmp_path, "init", "-q", str(repo))
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
         "-m", "one")
    head = _git(repo, "rev-parse", "HEAD")
    branch = _git(repo, "symbolic-ref", "HEAD")
    git_dir = repo / ".git"
    assert read_ref(git_dir, branch) == head
    _git(repo, "pack-refs", "--all")
    assert not (git_dir / branch).exists()
    assert read_ref(git_dir, branch) == head
    assert read_ref(git_dir, "refs/heads/nothing") is None
