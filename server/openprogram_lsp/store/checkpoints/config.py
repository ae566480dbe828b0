"""Settings of the checkpoint store: size limit, extra excludes, retention."""

from __future__ import annotations

from dataclasses import dataclass

from openprogram_lsp.config.sections.checkpoints import CheckpointSection

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
    def from_config(cls, section: CheckpointSection) -> CheckpointConfig:
        """The store's settings from the validated ``[checkpoints]`` section."""
        return cls(max_file_bytes=section.max_file_bytes,
                   excludes=(*DEFAULT_EXCLUDES, *section.excludes), max_count=section.max_count,
                   max_age_days=section.max_age_days, max_files=section.max_files)
