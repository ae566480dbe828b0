"""Children of the tools die with the server, even when it is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from openprogram_lsp.tools.procs import die_with_parent, pdeathsig_prefix
from tests.tooling import missing

SCRIPT = textwrap.dedent("""
    import asyncio, sys
    from openprogram_lsp.tools import procs
    from openprogram_lsp.tools.procs import spawn

    if sys.argv[1] == "preexec":  # the fallback where setpriv is missing
        procs.pdeathsig_prefix = lambda: None

    async def main():
        proc = await spawn("/bin/sh", "-c", "sleep 30")
        print(proc.pid, flush=True)
        await asyncio.sleep(60)

    asyncio.run(main())
""")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _cmdline(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except FileNotFoundError:
        return []


@pytest.mark.parametrize("how", ["setpriv", "preexec"])
def test_a_command_dies_when_the_server_is_killed(how: str) -> None:
    if not sys.platform.startswith("linux"):
        missing("PR_SET_PDEATHSIG and /proc are Linux-only")
    assert die_with_parent() is not None, "prctl is not reachable through ctypes"
    assert pdeathsig_prefix() is not None, "setpriv --pdeathsig (util-linux) is missing"
    server = subprocess.Popen([sys.executable, "-c", SCRIPT, how], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None
        child = int(server.stdout.readline())
        # the kill comes once the command runs: setpriv asks for the signal before it execs
        # it, and a kill before that is the gap tools/procs.py documents
        deadline = time.monotonic() + 10
        while _cmdline(child)[:1] != [b"/bin/sh"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _cmdline(child)[:1] == [b"/bin/sh"] and _alive(child)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(child), "the command outlived the server"
    finally:
        server.kill()
        server.wait(10)
