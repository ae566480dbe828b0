"""Blocking work from a coroutine: on a worker thread, or inline on a loop with nothing else.

A server's loop serves many requests: its blocking file work goes to a thread. The loop the
synchronous turn API keeps for its caller's thread (``dispatcher.thread_loops``) runs one turn
and nothing else most of the time; handing a few milliseconds of file writes to a thread there
buys nothing and costs two thread wake-ups (each one waits for a CPU on a loaded machine).
``offload`` runs the call inline on such a loop while no other task is on it, and on a thread
otherwise. Only for calls that end quickly or must not be cut anyway (a cancel cannot
interrupt a call made inline; the caller sees it at its next ``await``).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_private: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def mark_private(loop: asyncio.AbstractEventLoop) -> None:
    """Note a loop that runs one caller's work (the synchronous API's), not a server's."""
    _private.add(loop)


def inline_ok() -> bool:
    """Whether the running loop is a private one with no task but the current one (tasks
    already told to cancel, such as a race's left-over waiter, are on their way out)."""
    loop = asyncio.get_running_loop()
    if loop not in _private:
        return False
    current = asyncio.current_task()
    return all(t is current or t.done() or t.cancelling() for t in asyncio.all_tasks(loop))


async def offload(fn: Callable[..., T], *args: Any) -> T:
    """``await asyncio.to_thread(fn, *args)``, or ``fn(*args)`` where ``inline_ok``."""
    if inline_ok():
        return fn(*args)
    return await asyncio.to_thread(fn, *args)
