"""The synchronous turn API's loops: one per thread, kept between calls, nothing left over."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import inspect
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher, turns
from openprogram_lsp.dispatcher.thread_loops import ThreadLoops


async def _loop_and_worker() -> tuple[asyncio.AbstractEventLoop, int | None]:
    worker = await asyncio.to_thread(lambda: threading.current_thread().ident)
    return asyncio.get_running_loop(), worker


def test_a_thread_keeps_its_loop_and_its_executor_from_call_to_call() -> None:
    loops = ThreadLoops()
    first, worker = loops.run(_loop_and_worker())
    second, again = loops.run(_loop_and_worker())
    assert first is second and not first.is_closed()
    assert worker == again  # the executor's thread was kept, not started per call
    other: list[asyncio.AbstractEventLoop] = []
    thread = threading.Thread(target=lambda: other.append(loops.run(_loop_and_worker())[0]))
    thread.start()
    thread.join(10)
    assert other and other[0] is not first  # every thread its own loop


def test_a_task_a_call_leaves_behind_is_cancelled_at_its_end() -> None:
    loops = ThreadLoops()
    ran: list[str] = []

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            ran.append("cancelled")
            raise

    async def leave_one() -> asyncio.Task[None]:
        task = asyncio.ensure_future(forever())
        await asyncio.sleep(0)
        return task

    task = loops.run(leave_one())
    assert task.cancelled() and ran == ["cancelled"]  # as asyncio.run would have done
    assert loops.run(asyncio.sleep(0, "next")) == "next"  # and the loop goes on serving


def test_ctrl_c_the_kernel_hands_another_thread_still_cancels_the_call() -> None:
    loops = ThreadLoops()
    # a suite started in the background inherits SIGINT ignored (and an ignored one stays
    # ignored); a command at a terminal has Python's handler
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _ctrl_c_to_another_thread(loops)
    finally:
        signal.signal(signal.SIGINT, inherited)


def _ctrl_c_to_another_thread(loops: ThreadLoops) -> None:
    before = signal.getsignal(signal.SIGINT)

    async def main() -> str:
        def to_a_worker() -> None:  # the signal lands on this thread, not on the loop's
            time.sleep(0.1)  # (not a wait for anything: the loop is asleep in select by then)
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)

        threading.Thread(target=to_a_worker).start()
        start = time.monotonic()
        try:
            await asyncio.sleep(30)  # the loop sleeps in select: only the wakeup socket helps
        except asyncio.CancelledError:
            # woken at once, not when the sleep ended (50x what it needs, for a loaded machine)
            return "cancelled" if time.monotonic() - start < 5 else "cancelled late"
        return "slept"

    assert loops.run(main(), cancel_on_sigint=True) == "cancelled"
    assert signal.getsignal(signal.SIGINT) is before  # put back after the call


def test_a_plain_call_on_the_main_thread_is_cut_by_ctrl_c_as_runner_run_would() -> None:
    loops = ThreadLoops()
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    ran: list[str] = []

    async def main() -> None:
        asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGINT)
        try:
            await asyncio.sleep(30)
        finally:
            ran.append("cancelled")  # the task was cancelled, not the loop left

    try:
        with pytest.raises(KeyboardInterrupt):
            loops.run(main())
        assert ran == ["cancelled"]
        # the handler it set is gone, and a call Ctrl-C does not touch ends as before
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert loops.run(asyncio.sleep(0, "next")) == "next"
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        # a handler of the caller's own is left in place, as Runner.run leaves it
        mine = signal.signal(signal.SIGINT, lambda *_: None)
        own = signal.getsignal(signal.SIGINT)
        assert loops.run(asyncio.sleep(0, 1)) == 1 and signal.getsignal(signal.SIGINT) is own
        signal.signal(signal.SIGINT, mine)
    finally:
        signal.signal(signal.SIGINT, inherited)


_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("_VAR", default="unset")


def test_calls_of_one_thread_share_one_context() -> None:
    loops = ThreadLoops()

    async def put() -> None:
        _VAR.set("set by the first call")

    async def get() -> str:
        return _VAR.get()

    loops.run(put())
    assert loops.run(get()) == "set by the first call"  # as under one asyncio.Runner
    assert _VAR.get() == "unset"  # the caller's own context untouched


def test_a_cancel_during_an_inline_finalize_cuts_nothing_and_is_reported(
        make_dispatcher: Callable[..., Dispatcher], workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    d = make_dispatcher(model="offline", permission_mode="bypass")
    real = turns.finalize_turn
    seen: list[int | None] = []

    def cancelled_midway(*args: Any) -> Any:
        seen.append(threading.current_thread().ident)
        task = asyncio.current_task()
        assert task is not None  # run inline, inside the turn's task
        task.cancel()  # what Ctrl-C does now
        return real(*args)

    monkeypatch.setattr(turns, "finalize_turn", cancelled_midway)
    with pytest.raises(asyncio.CancelledError):  # reported, as a cancel asked of a thread is
        d.process_user_turn(TurnRequest(text="write f.txt version 1"))
    assert seen == [threading.current_thread().ident]
    [sid] = [r["id"] for r in d.services.store.list_sessions()]
    reply = d.services.store.get_branch(sid)[-1]
    assert reply.status == "done" and reply.metadata.get("checkpointId")  # all of it saved
    assert (workspace / "f.txt").read_text() != ""


def test_a_call_from_inside_a_running_loop_is_refused_and_leaves_that_loop_alone() -> None:
    loops = ThreadLoops()
    seen: list[str] = []

    async def sibling() -> None:
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        seen.append("sibling ran")

    async def outer() -> str:
        beside = asyncio.ensure_future(sibling())
        inner = asyncio.sleep(0, "inner")
        with pytest.raises(RuntimeError, match="running event loop"):
            loops.run(inner)
        assert inspect.getcoroutinestate(inner) == inspect.CORO_CLOSED  # no 'never awaited'
        await asyncio.sleep(0)  # not cancelled: the call touched no task of this loop
        await beside
        return "outer went on"

    # re-entered from a call of its own loop, and from a loop of someone else's
    assert loops.run(outer()) == "outer went on"
    assert asyncio.run(outer()) == "outer went on"
    assert seen == ["sibling ran", "sibling ran"]
    assert loops.run(asyncio.sleep(0, "next")) == "next"  # and it goes on serving


def test_a_forked_child_dropping_the_loop_leaves_the_parents_loop_awake() -> None:
    """The child's copy of the loop shares the parent's epoll instance: closing it there
    must not unregister the parent's self-pipe (a thread's result would never wake it)."""
    loops = ThreadLoops()

    async def from_a_thread() -> float:
        loop = asyncio.get_running_loop()
        loop.call_later(5, lambda: None)  # a backstop: a lost wake-up ends in 5 s, not never
        start = time.monotonic()
        await asyncio.to_thread(lambda: None)
        return time.monotonic() - start

    assert loops.run(from_a_thread()) < 2  # the parent's loop exists and wakes
    pid = os.fork()
    if pid == 0:
        try:
            loops.run(asyncio.sleep(0))  # the child takes a loop of its own,
            gc.collect()  # and drops (closes) its copy of the parent's
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert loops.run(from_a_thread()) < 2  # still woken by the thread, not the backstop
