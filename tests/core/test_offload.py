"""Blocking work inline on a private loop with nothing else to run, on a thread otherwise."""

from __future__ import annotations

import asyncio
import threading

from openprogram_lsp.core.offload import offload
from openprogram_lsp.dispatcher.thread_loops import ThreadLoops


def _where() -> int | None:
    return threading.current_thread().ident


async def _alone() -> int | None:
    return await offload(_where)


async def _beside_another_task() -> int | None:
    other = asyncio.ensure_future(asyncio.sleep(1))
    try:
        return await offload(_where)
    finally:
        other.cancel()


def test_inline_only_on_a_private_loop_with_nothing_else_on_it() -> None:
    here = threading.current_thread().ident
    loops = ThreadLoops()
    assert loops.run(_alone()) == here  # no thread hop
    assert loops.run(_beside_another_task()) != here  # another task may need the loop
    assert asyncio.run(_alone()) != here  # a loop of its own caller's making: a server's
