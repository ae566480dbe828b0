"""What restore and hunk restore need of a ``store.CheckpointStore`` (kept below it)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from openprogram_lsp.core.types import Checkpoint
from openprogram_lsp.store.checkpoints.buffers import BufferOverlay
from openprogram_lsp.store.checkpoints.chain import Entry
from openprogram_lsp.store.checkpoints.extras import Extras
from openprogram_lsp.store.checkpoints.lock import WorkspaceLock
from openprogram_lsp.store.checkpoints.results import CheckpointDiff
from openprogram_lsp.store.checkpoints.shadow import ShadowRepo


class StoreView(Protocol):
    """One workspace's checkpoint store: its repo, lock, chain entries and commits."""

    workspace: Path
    repo: ShadowRepo
    lock: WorkspaceLock
    buffers: BufferOverlay

    def note_paths(self, paths: Iterable[str]) -> None:
        """Record paths that may have changed."""

    def modified_on_disk(self, paths: tuple[str, ...] | None,
                         known: Iterable[str] = ()) -> list[str]:
        """Recorded files (under ``paths``) that differ on disk from what the store last read
        (``known``: paths the caller re-reads anyway)."""

    def diff(self, checkpoint_id: str, path: str | None = None) -> CheckpointDiff:
        """A checkpoint against its parent."""

    def _open(self) -> None: ...

    def _entry(self, checkpoint_id: str) -> Entry: ...

    def _head_checkpoint_id(self, head: str) -> str | None: ...

    def _modes_of(self, commit: str | None) -> dict[str, int]: ...

    def _extras_of(self, commit: str | None) -> Extras | None: ...

    def _checked_relative(self, path: str) -> str: ...

    def _commit(self, kind: str, session_id: str | None, turn_id: str | None, message: str,
                *, full: bool = False, allow_empty: bool = False,
                restored_from: str | None = None, undo: str | None = None,
                undoes: str | None = None
                ) -> Checkpoint | None: ...
