"""One event loop per calling thread for the synchronous turn API, kept from call to call.

``asyncio.run`` makes a loop, and a default executor whose first ``to_thread`` starts a
thread, for every call, and joins that thread at the end: a turn run from a thread or the CLI
paid both each time. ``ThreadLoops.run`` runs each call on its thread's own loop instead,
and after each call does what ``asyncio.run`` does at its end except closing the loop:
tasks the call left behind are cancelled and awaited, so no task outlives its call. A loop
whose thread has ended is closed when its holder goes (thread-local storage), and a forked
child never reuses its parent's loop.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _Held:
    """A thread's runner and the process it was made in."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.runner = asyncio.Runner()

    def __del__(self) -> None:  # its thread ended (or the process is exiting)
        if self.pid == os.getpid():
            try:
                loop = self.runner.get_loop()
            except RuntimeError:  # already closed
                return
            if not loop.is_running():
                loop.close()


class ThreadLoops:
    """Runs coroutines to completion on the calling thread's own, reused loop."""

    def __init__(self) -> None:
        self._local = threading.local()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """``asyncio.run(coro)``, on this thread's kept loop."""
        held: _Held | None = getattr(self._local, "held", None)
        if held is None or held.pid != os.getpid():
            held = self._local.held = _Held()
        try:
            return held.runner.run(coro)
        finally:
            _cancel_left_over(held.runner.get_loop())


def _cancel_left_over(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks a call left on the loop and let them finish (``asyncio.run`` does
    this before it closes its loop)."""
    left = [t for t in asyncio.all_tasks(loop) if not t.done()]
    if not left:
        return
    for task in left:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    for task in left:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler({"message": "unhandled exception in a task left by a "
                                                    "turn", "exception": task.exception(),
                                         "task": task})
