"""Settings of the checkpoint store: size limit, extra excludes, retention."""

from __future__ import annotations

import os
from dataclasses import dataclass

# Directories that are almost never source and are huge when present; a project's own
# .gitignore usually covers them, but non-git workspaces have none.
DEFAULT_EXCLUDES: tuple[str, ...] = (
    "node_modules/",
    "__pycache__/",
    ".venv/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".DS_Store",
)


_DEFAULT_MAX_BYTES = 5 * 1024 * 1024
_DEFAULT_MAX_COUNT = 200
_DEFAULT_MAX_AGE_DAYS = 30.0
_DEFAULT_MAX_FILES = 300_000


@dataclass(frozen=True, slots=True)
class CheckpointConfig:
    """How the checkpoint store records a workspace."""

    max_file_bytes: int = _DEFAULT_MAX_BYTES
    excludes: tuple[str, ...] = DEFAULT_EXCLUDES
    max_count: int = _DEFAULT_MAX_COUNT
    max_age_days: float = _DEFAULT_MAX_AGE_DAYS
    max_files: int = _DEFAULT_MAX_FILES  # more paths than this in one walk: refuse (a home dir?)
    lock_timeout: float = 120.0
    git_timeout: float = 300.0

    @classmethod
    def from_env(cls) -> CheckpointConfig:
        """Defaults overridden by ``OPENPROGRAM_CHECKPOINT_*`` environment variables."""
        env = os.environ
        excludes = DEFAULT_EXCLUDES
        extra = env.get("OPENPROGRAM_CHECKPOINT_EXCLUDES")
        if extra:
            excludes = (*DEFAULT_EXCLUDES, *[p for p in extra.split(",") if p.strip()])
        return cls(
            max_file_bytes=int(env.get("OPENPROGRAM_CHECKPOINT_MAX_FILE_BYTES",
                                       _DEFAULT_MAX_BYTES)),
            excludes=excludes,
            max_count=int(env.get("OPENPROGRAM_CHECKPOINT_MAX_COUNT", _DEFAULT_MAX_COUNT)),
            max_age_days=float(env.get("OPENPROGRAM_CHECKPOINT_MAX_AGE_DAYS",
                                       _DEFAULT_MAX_AGE_DAYS)),
            max_files=int(env.get("OPENPROGRAM_CHECKPOINT_MAX_FILES", _DEFAULT_MAX_FILES)),
        )
