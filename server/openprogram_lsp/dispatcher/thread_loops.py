"""One event loop per calling thread for the synchronous turn API, kept from call to call.

``asyncio.run`` makes a loop, and a default executor whose first ``to_thread`` starts a
thread, for every call, and joins that thread at the end: a turn run from a thread or the CLI
paid both each time. ``ThreadLoops.run`` runs each call on its thread's own loop instead,
and after each call does what ``asyncio.run`` does at its end except closing the loop:
tasks the call left behind are cancelled and awaited, so no task outlives its call. A loop
whose thread has ended is closed when its holder goes (thread-local storage), and a forked
child never reuses its parent's loop. Its loops are marked private (``core.offload``): short
blocking work runs inline there while nothing else is on the loop.

On the main thread a call may have Ctrl-C cancel it (``cancel_on_sigint``): the first SIGINT
cancels the call's task, a second raises KeyboardInterrupt, as under ``asyncio.run``. The
signal goes through a wakeup socket the loop watches, so a SIGINT the kernel hands to another
thread still wakes the loop from ``select`` (``asyncio.run``'s plain handler would wait for
the next event, and a command could hang at its prompt). It is set up per call with a few
system calls, not ``loop.add_signal_handler``, whose check of the signal number builds the
set of every valid signal (0.2-0.4 ms a call on this machine, twice a turn).

A call runs its task on the kept loop itself rather than through ``asyncio.Runner.run``, with
the same Ctrl-C handling on the main thread (the first SIGINT cancels the task, a second
raises KeyboardInterrupt; a call cancelled by it raises KeyboardInterrupt). Handlers are read
and set with the C module's ``getsignal``/``signal``: the ``signal`` module's wrappers turn
each handler into an enum member where they can, and for a handler that is not one build the
error message's ``repr`` of it, which for ``Runner``'s handler (a partial holding the task) is
the task's whole repr: four a turn, 0.3-1 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import os
import selectors
import signal
import socket
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from openprogram_lsp.core.offload import mark_private

T = TypeVar("T")

_raw_signal = importlib.import_module("_signal")
_getsignal: Callable[[int], object] = _raw_signal.getsignal
_setsignal: Callable[[int, object], object] = _raw_signal.signal


class _Held:
    """A thread's runner and the process it was made in."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.runner = asyncio.Runner()
        self.context = contextvars.copy_context()
        self._wake: tuple[socket.socket, socket.socket] | None = None
        _every_held.add(self)

    def disown(self) -> None:
        """In a forked child: cut this inherited loop from the epoll instance it shares with
        the parent. Registrations belong to that one kernel object, so the loop's own
        ``close()`` here (its ``__del__`` runs it when the child drops the loop) would
        unregister the parent's self-pipe: the parent's loop would then never wake for
        ``call_soon_threadsafe``, and an ``await`` on a thread's result would hang for good
        (a turn after a forked child's turn did, in tests/dispatcher/test_turn_kills.py).
        Only this process's copy of the epoll descriptor is closed; the loop then closes
        against an empty selector of its own."""
        loop: asyncio.AbstractEventLoop | None = getattr(self.runner, "_loop", None)
        selector = getattr(loop, "_selector", None)
        if loop is None or selector is None or loop.is_running():
            return  # a loop the forking thread runs is the child's own from here on
        with contextlib.suppress(OSError):
            selector.close()  # the fd only: an epoll close deregisters nothing of the parent's
        loop._selector = selectors.DefaultSelector()  # type: ignore[attr-defined]

    def __del__(self) -> None:  # its thread ended (or the process is exiting)
        if self.pid != os.getpid():
            return
        if self._wake is not None:
            for sock in self._wake:
                sock.close()
        try:
            loop = self.runner.get_loop()
        except RuntimeError:  # already closed
            return
        if not loop.is_running():
            loop.close()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """``Runner.run(coro)``: its task on this thread's loop, in the thread's context; on
        the main thread, under Python's default SIGINT handler, Ctrl-C cancels it."""
        loop = self.runner.get_loop()
        task = loop.create_task(coro, context=self.context)
        handler: Callable[[int, object], None] | None = None
        interrupts = 0
        if (threading.current_thread() is threading.main_thread()
                and _getsignal(signal.SIGINT) is signal.default_int_handler):

            def on_sigint(signum: int, frame: object) -> None:
                nonlocal interrupts
                interrupts += 1
                if interrupts == 1 and not task.done():
                    task.cancel()
                    loop.call_soon_threadsafe(lambda: None)  # wake the loop's select
                    return
                raise KeyboardInterrupt

            try:
                _setsignal(signal.SIGINT, on_sigint)
                handler = on_sigint
            except ValueError:  # an interpreter whose main thread takes no signals
                pass
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            if interrupts > 0 and task.uncancel() == 0:
                raise KeyboardInterrupt()  # noqa: B904 (as Runner.run raises it)
            raise
        finally:
            if handler is not None and _getsignal(signal.SIGINT) is handler:
                _setsignal(signal.SIGINT, signal.default_int_handler)

    def cancel_on_sigint(self, task: asyncio.Task[Any]) -> Callable[[], None] | None:
        """Have SIGINT cancel ``task`` (a second one raises KeyboardInterrupt) until the
        returned function is called; None where nothing was installed (not the main thread,
        SIGINT ignored)."""
        if threading.current_thread() is not threading.main_thread():
            return None
        before = _getsignal(signal.SIGINT)
        if before in (signal.SIG_IGN, None):
            return None
        if self._wake is None:
            pair = socket.socketpair()
            for sock in pair:
                sock.setblocking(False)
            self._wake = pair
        reader, writer = self._wake
        loop = task.get_loop()
        hits = 0

        def on_sigint(signum: int, frame: object) -> None:
            nonlocal hits
            hits += 1
            if hits > 1 or task.done():
                raise KeyboardInterrupt
            task.cancel()

        def drain() -> None:
            with contextlib.suppress(OSError):
                while reader.recv(512):
                    pass

        loop.add_reader(reader.fileno(), drain)
        try:
            old_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
            _setsignal(signal.SIGINT, on_sigint)
        except (ValueError, OSError):
            loop.remove_reader(reader.fileno())
            return None

        def restore() -> None:
            _setsignal(signal.SIGINT, before)
            signal.set_wakeup_fd(old_fd)
            loop.remove_reader(reader.fileno())
            drain()

        return restore


_every_held: weakref.WeakSet[_Held] = weakref.WeakSet()


def _disown_inherited() -> None:
    """After a fork, in the child: every loop made before it (on any thread) is the
    parent's; cut each from the kernel objects they share (``_Held.disown``)."""
    for held in list(_every_held):
        if held.pid != os.getpid():
            held.disown()


os.register_at_fork(after_in_child=_disown_inherited)


class ThreadLoops:
    """Runs coroutines to completion on the calling thread's own, reused loop."""

    def __init__(self) -> None:
        self._local = threading.local()

    def run(self, coro: Coroutine[Any, Any, T], *, cancel_on_sigint: bool = False) -> T:
        """``asyncio.run(coro)``, on this thread's kept loop (``cancel_on_sigint``: Ctrl-C
        cancels it, on the main thread).

        Called from a coroutine (a loop already running on this thread, this one's own or
        another) it raises ``RuntimeError`` and leaves that loop and its tasks alone: the
        call would block the loop it came from, so async callers await the coroutine
        instead (``Dispatcher.run_turn`` rather than ``process_user_turn``)."""
        if asyncio._get_running_loop() is not None:
            coro.close()
            raise RuntimeError(
                "ThreadLoops.run() (the synchronous turn API) was called from a running event "
                "loop on this thread; await the coroutine instead (e.g. Dispatcher.run_turn)")
        held: _Held | None = getattr(self._local, "held", None)
        if held is None or held.pid != os.getpid():
            held = self._local.held = _Held()
            mark_private(held.runner.get_loop())
        try:
            return held.run(_guarded(held, coro) if cancel_on_sigint else coro)
        finally:
            _cancel_left_over(held.runner.get_loop())


async def _guarded(held: _Held, coro: Coroutine[Any, Any, T]) -> T:
    task = asyncio.current_task()
    restore = held.cancel_on_sigint(task) if task is not None else None
    try:
        return await coro
    finally:
        if restore is not None:
            restore()


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
