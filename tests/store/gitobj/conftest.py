"""The object-layer tests' bare repository (``_git.git`` runs git in one)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from openprogram_lsp.store.git import git_env


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A bare repository (``test_odb`` uses a non-bare one of its own)."""
    path = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True, env=git_env())
    return path
