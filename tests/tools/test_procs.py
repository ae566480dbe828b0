"""Children of the tools die with the server, even when it is killed with SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.tools.procs import die_with_parent, pdeathsig_prefix
from tests.tooling import missing

SCRIPT = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from openprogram_lsp.tools import procs
    from openprogram_lsp.tools.procs import spawn
    from openprogram_lsp.tools.sandbox import availability, bwrap_argv

    how, kinds, command = sys.argv[1:4]
    if how == "preexec":  # the fallback where setpriv is missing
        procs.pdeathsig_prefix = lambda: None

    async def main():
        for n, kind in enumerate(kinds.split(",")):
            prefix = []
            if kind == "sandbox":  # no --die-with-parent: as if bwrap were still setting up
                prefix = [a for a in bwrap_argv(availability().path, Path.cwd(), network=True)
                          if a != "--die-with-parent"]
            child = await spawn(*prefix, "/bin/sh", "-c", command.replace("N", str(n)),
                                sandboxed=kind == "sandbox")
            print(child.pid, flush=True)
        await asyncio.sleep(60)

    asyncio.run(main())
""")


def _with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read() and _alive(int(pid)):
                    found.append(int(pid))
        except OSError:
            continue
    return found


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


def _start(how: str, kind: str, command: str, cwd: Path) -> subprocess.Popen[str]:
    if not sys.platform.startswith("linux"):
        missing("PR_SET_PDEATHSIG and /proc are Linux-only")
    assert die_with_parent() is not None, "prctl is not reachable through ctypes"
    assert pdeathsig_prefix() is not None, "setpriv --pdeathsig (util-linux) is missing"
    return subprocess.Popen([sys.executable, "-c", SCRIPT, how, kind, command],
                            stdout=subprocess.PIPE, text=True, cwd=cwd)


def _wait(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 10
    while not check() and time.monotonic() < deadline:
        time.sleep(0.01)
    return check()


@pytest.mark.parametrize("how", ["setpriv", "preexec"])
def test_a_command_dies_when_the_server_is_killed(how: str, tmp_path: Path) -> None:
    server = _start(how, "plain", "sleep 30", tmp_path)
    try:
        assert server.stdout is not None
        child = int(server.stdout.readline())
        # the kill comes once the command runs: setpriv asks for the signal before it execs
        # it, and a kill before that is the gap tools/procs.py documents
        assert _wait(lambda: _cmdline(child)[:1] == [b"/bin/sh"] and _alive(child))
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        assert _wait(lambda: not _alive(child)), "the command outlived the server"
    finally:
        server.kill()
        server.wait(10)


def test_what_the_command_started_dies_with_the_server_too(tmp_path: Path) -> None:
    """The server's death reaches the command's whole process group (the shell's background
    jobs, not only the shell), and a sandbox whose bwrap never got to ask for its own death
    signal (as when the server is killed while bwrap sets the sandbox up)."""
    marker = "38.5"
    server = _start("setpriv", "plain,sandbox", f"sleep {marker}N & sleep {marker}N",
                    tmp_path)
    try:
        assert server.stdout is not None
        server.stdout.readline()
        server.stdout.readline()
        assert _wait(lambda: len([p for p in _with(marker) if _cmdline(p)[0] == b"sleep"]) == 4)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        assert _wait(lambda: not _with(marker)), f"left running: {_with(marker)}"
    finally:
        server.kill()
        server.wait(10)
        for pid in _with(marker):  # a failure leaves nothing behind on the shared machine
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
