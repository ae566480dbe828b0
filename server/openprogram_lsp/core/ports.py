"""Interfaces a lower layer needs and a higher layer implements (injected by ``app``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager
from typing import Protocol, runtime_checkable

from openprogram_lsp.core.types import (
    Checkpoint,
    PermissionOutcome,
    PermissionRequest,
    Question,
)


@runtime_checkable
class Approver(Protocol):
    """Asks the user whether a tool call may run."""

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        """Return the user's choice, or ``outcome="cancelled"``."""
        ...


@runtime_checkable
class Asker(Protocol):
    """Puts an agent question to the user."""

    async def ask(self, question: Question) -> str | None:
        """Return the answer, or None when the user dismissed the question."""
        ...


@runtime_checkable
class Checkpointer(Protocol):
    """Records the project's files after each turn that changed them."""

    def ensure_baseline(self, session_id: str) -> Checkpoint | None:
        """Take the baseline checkpoint before the first edit of a session, if none exists."""
        ...

    def note_paths(self, paths: Iterable[str]) -> None:
        """Tell the checkpointer which workspace paths may have changed."""
        ...

    def commit_turn(self, session_id: str, turn_id: str, message: str,
                    *, full_scan: bool = False) -> Checkpoint | None:
        """Commit the workspace's changes for a turn; None when nothing changed."""
        ...

    def turn_guard(self, timeout: float | None = None) -> AbstractAsyncContextManager[None]:
        """Hold the workspace from a turn's first edit to its checkpoint (serialises sessions)."""
        ...

    def prune_if_due(self, keep_ids: Iterable[str] | Callable[[], Iterable[str]] = ()
                     ) -> list[str]:
        """Apply the retention limits when they are exceeded; returns dropped ids."""
        ...
