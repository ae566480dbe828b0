"""Per-turn control: cancel, steering interjections and follow-ups."""

from __future__ import annotations

import asyncio
import threading
from collections import deque


class TurnControl:
    """Signals a running turn can receive from outside (thread-safe)."""

    def __init__(self, cancel: asyncio.Event | None = None) -> None:
        self.cancel = cancel or asyncio.Event()
        self._lock = threading.Lock()
        self._steering: deque[str] = deque()
        self._follow_ups: deque[str] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self.interrupted = False

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Remember the loop the turn runs on, so other threads can cancel it."""
        self._loop = loop

    def request_cancel(self) -> None:
        """Ask the turn to stop (safe from any thread)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                self.cancel.set()
            else:
                loop.call_soon_threadsafe(self.cancel.set)
        else:
            self.cancel.set()

    def interrupt(self) -> None:
        """Stop the turn because its server or editor stops, not because the user asked:
        it ends like a cancel and is recorded ``interrupted``."""
        self.interrupted = True
        self.request_cancel()

    @property
    def cancelled(self) -> bool:
        return self.cancel.is_set()

    def steer(self, text: str) -> None:
        """Interject a message: fed back after the current tool, skipping the rest."""
        with self._lock:
            self._steering.append(text)

    def follow_up(self, text: str) -> bool:
        """Queue a message to be handled when the turn would otherwise end.

        Returns False (and queues nothing) once the turn stopped taking follow-ups.
        """
        with self._lock:
            if self._closed:
                return False
            self._follow_ups.append(text)
            return True

    def close_follow_ups(self) -> list[str]:
        """Stop taking follow-ups and return those queued but never taken (turn end)."""
        with self._lock:
            self._closed = True
            out = list(self._follow_ups)
            self._follow_ups.clear()
            return out

    def take_steering(self) -> list[str]:
        with self._lock:
            out = list(self._steering)
            self._steering.clear()
            return out

    def take_follow_up(self) -> str | None:
        with self._lock:
            return self._follow_ups.popleft() if self._follow_ups else None

    @property
    def has_steering(self) -> bool:
        with self._lock:
            return bool(self._steering)
