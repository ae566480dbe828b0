"""What every child process the tools start shares: a scrubbed environment, group kill."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

from openprogram_lsp.core.secrets import is_secret_name


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment without any credential, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not is_secret_name(k)}
    env.update(extra or {})
    return env


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL a child started with ``start_new_session`` and everything it spawned."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def spawn(*argv: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """``create_subprocess_exec`` in its own session; a cancel mid-start still kills it."""
    start = asyncio.ensure_future(
        asyncio.create_subprocess_exec(*argv, start_new_session=True, **kwargs))
    try:
        return await asyncio.shield(start)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            proc = await start
            kill_group(proc)
            await asyncio.wait_for(proc.wait(), 2)
        raise


async def reap(proc: asyncio.subprocess.Process) -> None:
    """Kill a child's whole group and wait (bounded) for it."""
    kill_group(proc)
    with contextlib.suppress(TimeoutError, ProcessLookupError):
        await asyncio.wait_for(proc.wait(), 2)
