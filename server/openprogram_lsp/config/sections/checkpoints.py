"""``[checkpoints]``: what the per-turn checkpoints record and how long they are kept."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from openprogram_lsp.config.section import EnvVar, Section


class CheckpointSection(Section):
    """Size limit, extra excludes and retention of checkpoints."""

    name: ClassVar[str] = "checkpoints"
    env: ClassVar[dict[str, EnvVar]] = {
        "max_file_bytes": EnvVar("OPENPROGRAM_CHECKPOINT_MAX_FILE_BYTES",
                                 "larger files are not recorded"),
        "excludes": EnvVar("OPENPROGRAM_CHECKPOINT_EXCLUDES",
                           "extra gitignore patterns, comma-separated", split=True),
        "max_count": EnvVar("OPENPROGRAM_CHECKPOINT_MAX_COUNT", "checkpoints kept per workspace"),
        "max_age_days": EnvVar("OPENPROGRAM_CHECKPOINT_MAX_AGE_DAYS", "older ones are pruned"),
        "max_files": EnvVar("OPENPROGRAM_CHECKPOINT_MAX_FILES",
                            "a workspace with more files is refused"),
    }

    max_file_bytes: int = Field(5 * 1024 * 1024, ge=1)
    excludes: list[str] = Field(default_factory=list)
    max_count: int = Field(200, ge=1)
    max_age_days: float = Field(30.0, gt=0)
    max_files: int = Field(300_000, ge=1)
