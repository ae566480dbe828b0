"""The port through which the dispatcher reaches collaboration (``collab/``, one layer up)."""

from __future__ import annotations

import asyncio
from typing import Protocol

from openprogram_lsp.core.ports import AgentRun
from openprogram_lsp.dispatcher.active import ActiveTurn


class Collaboration(Protocol):
    """Background children, deliveries and replies of one dispatcher, seen from below."""

    def after_turn(self, turn: ActiveTurn, status: str, leftover: list[str]) -> None:
        """A turn ended: cancel its children if it was cancelled, re-queue unread follow-ups."""

    def cancel_session(self, sid: str) -> int:
        """Cancel the jobs started from a session and those running in it."""

    def cancel_all(self) -> int:
        """Cancel every job (shutdown)."""

    def list_agents(self, session_id: str | None = None) -> list[AgentRun]:
        """Children and deliveries of a session (or of every session)."""

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run background jobs on this (the server's) event loop."""

    async def drain(self, timeout: float = 30.0) -> bool:
        """Wait until no job runs; False on timeout."""

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until no job runs; False on timeout."""

    def busy(self) -> bool:
        """Whether a job is still running."""

    def close(self, timeout: float = 10.0) -> None:
        """Cancel every job and stop the job loop."""


class NoCollaboration:
    """A dispatcher without collaboration: nothing runs in the background."""

    def after_turn(self, turn: ActiveTurn, status: str, leftover: list[str]) -> None:
        """Nothing to cancel or re-queue."""

    def cancel_session(self, sid: str) -> int:
        """No jobs."""
        return 0

    def cancel_all(self) -> int:
        """No jobs."""
        return 0

    def list_agents(self, session_id: str | None = None) -> list[AgentRun]:
        """No children."""
        return []

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """No job loop."""

    async def drain(self, timeout: float = 30.0) -> bool:
        """Always idle."""
        return True

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Always idle."""
        return True

    def busy(self) -> bool:
        """Never busy."""
        return False

    def close(self, timeout: float = 10.0) -> None:
        """Nothing to stop."""
