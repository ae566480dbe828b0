"""The MCP event loop: one daemon thread that owns every MCP connection of the process.

Turns run on the language server's loop, on ``asyncio.run`` loops (CLI) and on job loops;
connections must outlive all of them, and a misbehaving server must never stall the loop a
turn or the editor runs on. Callers hop here with :meth:`McpLoop.run`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class McpLoop:
    """A private event loop on a daemon thread, started on first use."""

    def __init__(self, name: str = "openprogram-mcp") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop (started if needed)."""
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                ready = threading.Event()
                loop = asyncio.new_event_loop()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=main, name=self._name, daemon=True)
                self._thread.start()
                ready.wait(10)
                self._loop = loop
            return self._loop

    @property
    def started(self) -> bool:
        """Whether the loop is running (never starts it)."""
        loop = self._loop
        return loop is not None and not loop.is_closed()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule a coroutine here from any thread (with no ContextVars of the caller)."""
        loop = self.loop
        fut: concurrent.futures.Future[T] = contextvars.Context().run(
            asyncio.run_coroutine_threadsafe, coro, loop)
        return fut

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await a coroutine run here; cancelling the caller cancels it."""
        if self.started and asyncio.get_running_loop() is self._loop:
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine here and block the calling (non-MCP) thread for its result."""
        return self.submit(coro).result(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop and its thread (connections should be closed first)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if not loop.is_running():
            loop.close()
