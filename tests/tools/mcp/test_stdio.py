"""An MCP stdio server's process ends with its connection, its children with it: on close, on a
close it ignores, and when our process is killed with SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from openprogram_lsp.tools.mcp import McpHub, stdio
from tests import signals
from tests.tooling import missing
from tests.tools.mcp.demo import python, trusted_editor_servers

TINY = Path(__file__).with_name("tiny_server.py")


@pytest.fixture(autouse=True)
def _linux() -> None:
    if not sys.platform.startswith("linux"):
        missing("pidfds and /proc are Linux-only")


def _tiny(pids: Path, mark: str, *flags: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(TINY), "--child", *flags],
            "env": {"TINY_PIDS": str(pids), "TINY_MARK": mark}}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _gone(*pids: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while any(map(_alive, pids)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _cleanup(*pids: int) -> None:
    """Nothing of a failed test left on the shared machine (pids checked to be ours)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            if b"42." in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("flags", [(), ("--hang",), ("--own-group",)],
                         ids=["exits", "hangs", "child-in-own-group"])
async def test_closing_ends_the_server_and_its_child(flags: tuple[str, ...], tmp_path: Path,
                                                     workspace: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that exits at the end of its stdin leaves no child behind (the SDK's close
    only signals the group when the server outlives the grace period), even one it moved to
    a group of its own; one that ignores the close and SIGTERM is killed after the grace,
    with its child."""
    monkeypatch.setattr(stdio, "GRACE", 0.3)
    monkeypatch.setattr(stdio, "TERM_WAIT", 0.3)
    pids = tmp_path / "pids"
    hub = McpHub(tmp_path / "home", read_user_config=False)
    trusted_editor_servers(hub, {"tiny": _tiny(pids, "42.1", *flags)})
    server = child = -1
    try:
        assert await hub.tools_for(workspace) == []
        assert hub.status(workspace)[0]["status"] == "ready"
        server, child = map(int, pids.read_text().split())
        assert _alive(server) and _alive(child)
    finally:
        with signals.recorded() as sent:
            await hub.aclose()
        try:
            assert _gone(server, child), "left running after the close"
        finally:
            _cleanup(server, child)
    # no signal by number to what may already be a stranger (the SDK polls a group it no
    # longer holds): a group only while its leader is our unreaped child
    assert sent and signals.only_to_our_groups(sent), sent


_OURS = textwrap.dedent("""
    import asyncio, os, sys
    from pathlib import Path
    from openprogram_lsp.tools.mcp import McpHub
    from openprogram_lsp.tools.mcp.config import parse_servers

    async def main():
        hub = McpHub(Path(sys.argv[1]) / "home", read_user_config=False)
        block = {"tiny": {"command": sys.executable,
                          "args": [sys.argv[2], "--child", *sys.argv[4:]],
                          "env": {"TINY_PIDS": sys.argv[3], "TINY_MARK": "42.2"}}}
        hub.set_editor_servers(block)
        for d in parse_servers(block, "editor")[0]:  # trusted, as after the user's "allow"
            hub.editor_trust.remember(d.name, d.fingerprint, "allow", command="",
                                      persist=False)
        await hub.tools_for(Path(sys.argv[1]))
        print(os.getpid(), flush=True)
        await asyncio.sleep(60)

    asyncio.run(main())
""")


@pytest.mark.parametrize("flags", [(), ("--hang",)], ids=["exits", "hangs"])
def test_the_server_and_its_child_die_with_us_killed_by_sigkill(flags: tuple[str, ...],
                                                               tmp_path: Path) -> None:
    pids, script = tmp_path / "pids", tmp_path / "ours.py"
    script.write_text(_OURS)
    # through the worker's fork server (its imports done once), printing its real pid
    ours = subprocess.Popen([python(), str(script), str(tmp_path), str(TINY), str(pids),
                             *flags], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    server = child = -1
    try:
        assert ours.stdout is not None
        pid = int(ours.stdout.readline())
        server, child = map(int, pids.read_text().split())
        assert _alive(server) and _alive(child)
        os.kill(pid, signal.SIGKILL)
        ours.wait(10)
        assert _gone(server, child), "the MCP server or its child outlived us"
    finally:
        ours.kill()
        ours.wait(10)
        _cleanup(server, child)
