"""Shared helpers for the checkpoint store tests (real git, real files)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from openprogram_lsp.store.checkpoints import CheckpointConfig, CheckpointStore

USER_GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "User", "GIT_AUTHOR_EMAIL": "user@example.com",
    "GIT_COMMITTER_NAME": "User", "GIT_COMMITTER_EMAIL": "user@example.com",
}


def sh(cmd: str, cwd: Path) -> str:
    """Run a shell command as the user would (their git, their environment)."""
    return subprocess.run(cmd, shell=True, cwd=cwd, env=USER_GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


def make_workspace(root: Path, *, git: bool) -> Path:
    """A small project: a few text files in two directories, optionally a committed git repo."""
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "docs").mkdir()
    (ws / "src" / "main.py").write_text("print('hello')\n")
    (ws / "src" / "util.py").write_text("def f():\n    return 1\n")
    (ws / "docs" / "readme.md").write_text("# Project\n")
    (ws / ".gitignore").write_text("*.log\nbuild/\n")
    if git:
        sh("git init -q -b main && git add -A && git commit -qm initial", ws)
    return ws


def open_store(ws: Path, home: Path, **config: object) -> CheckpointStore:
    """A store for a workspace under a private home."""
    return CheckpointStore(ws, home=home, config=CheckpointConfig(**config))  # type: ignore[arg-type]


def tree_hash(ws: Path, *, skip: tuple[str, ...] = (".git",)) -> dict[str, str]:
    """Path -> sha256 (or symlink target) of every file, skipping top-level entries in ``skip``."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        rel_dir = os.path.relpath(dirpath, ws)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in skip]
        for name in filenames:
            full = Path(dirpath) / name
            rel = os.path.relpath(full, ws)
            if rel in skip:
                continue
            if full.is_symlink():
                out[rel] = "link:" + os.readlink(full)
            else:
                out[rel] = hashlib.sha256(full.read_bytes()).hexdigest()
    return out


def dir_fingerprint(path: Path) -> dict[str, str]:
    """Path -> sha256 of every file under a directory (for .git byte-identity checks)."""
    return {os.path.relpath(p, path): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def files_of(checkpoint: object) -> set[tuple[str, str]]:
    """(path, status) pairs of a checkpoint."""
    return {(f.path, f.status) for f in checkpoint.files}  # type: ignore[attr-defined]
