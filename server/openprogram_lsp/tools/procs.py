"""What every child process the tools start shares: a scrubbed environment, group kill."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
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


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when this process dies (Linux); the
    fallback where ``pdeathsig_prefix`` finds no ``setpriv``.

    A child in its own session is out of reach of a kill of the server's process group, and a
    server killed with SIGKILL cannot reap it: without this a ``sleep 600`` outlives it.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the server died between fork and prctl
            os._exit(1)

    return preexec


@functools.cache
def pdeathsig_prefix() -> tuple[str, ...] | None:
    """``setpriv --pdeathsig KILL --`` (util-linux) when it works here, else None.

    The child then asks for SIGKILL on our death itself, before it execs the command, so no
    ``preexec_fn`` is needed. With one, Python forks the whole server (copying its page tables)
    and waits for the child to run Python code: 30+ ms with the event loop blocked on each
    spawn, seconds under load (``bench/bench_spawn.py``); without one it uses vfork. The cost:
    a server killed between the vfork and setpriv's prctl leaves that one child running.
    """
    if not sys.platform.startswith("linux"):
        return None
    exe = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin") or shutil.which("setpriv")
    if exe is None:
        return None
    try:  # util-linux before 2.33 has no --pdeathsig
        probe = subprocess.run([exe, "--pdeathsig", "KILL", "--", exe, "--version"],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=10,
                               check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (exe, "--pdeathsig", "KILL", "--") if probe.returncode == 0 else None


async def spawn(*argv: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """``create_subprocess_exec`` in its own session that dies with us; cancel-safe start."""
    prefix = pdeathsig_prefix()
    start = asyncio.ensure_future(
        asyncio.create_subprocess_exec(*prefix, *argv, start_new_session=True, **kwargs)
        if prefix is not None else
        asyncio.create_subprocess_exec(*argv, start_new_session=True,
                                       preexec_fn=die_with_parent(), **kwargs))
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
