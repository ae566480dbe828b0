"""What diff and restore return: typed values with snake_case fields (``lsp/`` and ``acp/``
turn them into their wire shapes)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

Change = Literal["added", "modified", "deleted"]


@dataclass(frozen=True, slots=True)
class Hunk:
    """Lines ``old_start .. old_start + old_lines`` (before) became ``new_start ..`` (after).

    Starts are 1-based like a unified diff's; a pure insertion has ``old_lines == 0`` and
    ``old_start`` the line it follows (0 at the top), a pure deletion likewise on the new side.
    """

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int


@dataclass(slots=True)
class FileDiff:
    """One changed file of a diff; ``before``/``after`` left out for binary or large files."""

    path: str
    status: Change
    before: str | None = None
    after: str | None = None
    binary: bool | None = None
    truncated: bool | None = None
    hunks: list[Hunk] | None = None  # text files: the changed runs (restore_hunk's index)


@dataclass(frozen=True, slots=True)
class CheckpointDiff:
    """A checkpoint against its parent (or one checkpoint's files against another's)."""

    checkpoint_id: str
    diff: str
    files: list[FileDiff]


@dataclass(frozen=True, slots=True)
class FileChange:
    """A file a restore wrote and how (ready for a ``file.changed`` event)."""

    path: str
    change: Change


@dataclass(frozen=True, slots=True)
class NotRestored:
    """A path a restore left as it is, and why (never recorded, something in its place...)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class RestoreOutcome:
    """What a restore (or undo, or hunk restore) wrote, and how to undo it."""

    restored: list[str]
    safety_checkpoint_id: str | None  # restore it to undo; None: nothing needed one
    changes: list[FileChange] = field(default_factory=list)
    checkpoint_id: str | None = None  # the checkpoint the restore made
    undone_checkpoint_id: str | None = None  # undo: the turn's checkpoint undone
    restored_from_checkpoint_id: str | None = None  # undo: the state the files came back to
    conflicts: list[str] | None = None  # changed by another process meanwhile, left alone
    skipped: list[str] | None = None  # not restored: the paths of ``not_restored``
    not_restored: list[NotRestored] | None = None  # left as they are, each with why
    code_checkpoint_id: str | None = None  # switching a branch's code: the state restored

    def but(self, **changes: object) -> RestoreOutcome:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


NOTHING_RESTORED = RestoreOutcome(restored=[], safety_checkpoint_id=None)
