"""Misbehaving servers: a crash mid-call, a hang at start, bytes that are not JSON-RPC."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from openprogram_lsp.tools.base import Tool, ToolContext
from openprogram_lsp.tools.mcp import McpHub
from tests.tools.mcp.demo import demo_def, trusted_editor_servers


async def _call(tool: Tool, ws: Path, **arguments: object) -> tuple[str, bool]:
    out = await tool.run(tool.parse(dict(arguments)), ToolContext(workspace=ws))
    return out.text, out.is_error


async def test_a_crash_mid_call_is_a_tool_error_and_the_server_restarts(
        tmp_path: Path, workspace: Path) -> None:
    hub = McpHub(tmp_path / "home", read_user_config=False, call_timeout=20)
    trusted_editor_servers(hub, {"demo": demo_def()})
    try:
        tools = {t.name: t for t in await hub.tools_for(workspace)}
        first_pid, _ = await _call(tools["mcp__demo__pid"], workspace)
        text, is_error = await _call(tools["mcp__demo__crash"], workspace)
        assert is_error
        assert "exited during the call" in text and "crashing on purpose" in text
        tools = {t.name: t for t in await hub.tools_for(workspace)}  # waits for the restart
        [row] = hub.status(workspace)
        assert row["status"] == "ready" and row["restarts"] >= 1
        second_pid, is_error = await _call(tools["mcp__demo__pid"], workspace)
        assert not is_error and second_pid != first_pid

        # killed from outside in the middle of a call: the call fails at once, not at timeout
        slow = asyncio.ensure_future(_call(tools["mcp__demo__slow"], workspace, seconds=60))
        await asyncio.sleep(0.3)
        os.kill(int(second_pid), signal.SIGKILL)
        started = time.monotonic()
        text, is_error = await asyncio.wait_for(slow, 15)
        assert is_error and "exited during the call" in text
        assert time.monotonic() - started < 10
        tools = {t.name: t for t in await hub.tools_for(workspace)}
        third_pid, is_error = await _call(tools["mcp__demo__pid"], workspace)
        assert not is_error and third_pid not in (first_pid, second_pid)
    finally:
        await hub.aclose()


async def test_a_server_that_never_answers_fails_clearly_without_blocking(
        tmp_path: Path, workspace: Path) -> None:
    hub = McpHub(tmp_path / "home", read_user_config=False, startup_timeout=1.0)
    pid_file = tmp_path / "mute.pid"
    # a real exec: the hub's kill of the pid it holds must end the server that never answered
    trusted_editor_servers(hub, {"mute": demo_def("--no-start", exec_server=True,
                                             env={"DEMO_PID_FILE": str(pid_file)})})
    try:
        started = time.monotonic()
        assert await hub.tools_for(workspace) == []
        assert time.monotonic() - started < 8
        [row] = hub.status(workspace)
        assert row["status"] in ("starting", "restarting", "failed")
        assert row["tools"] == []
    finally:
        await hub.aclose()
    # the server that never answered is not left running once the hub is closed
    if pid_file.exists():
        assert not _alive(int(pid_file.read_text()))


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie counts as gone), waiting up to 10 s."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


async def test_lines_that_are_not_json_rpc_do_not_break_the_connection(
        tmp_path: Path, workspace: Path) -> None:
    """A hostile server's invalid JSON, scalars, arrays, batches and 100,000-deep nesting
    before every answer (demo_server.GARBAGE): each call still gets its own answer."""
    hub = McpHub(tmp_path / "home", read_user_config=False, call_timeout=5)
    trusted_editor_servers(hub, {"noisy": demo_def("--garbage")})
    try:
        tools = {t.name: t for t in await hub.tools_for(workspace)}
        started = time.monotonic()
        text, is_error = await _call(tools["mcp__noisy__echo"], workspace, text="through")
        assert time.monotonic() - started < 8
        assert (text, is_error) == ("through", False)
        assert await _call(tools["mcp__noisy__echo"], workspace, text="again") == ("again", False)
        [row] = hub.status(workspace)
        assert row["status"] == "ready" and row["restarts"] == 0, row
    finally:
        await hub.aclose()


async def test_streamable_http_on_loopback(tmp_path: Path, workspace: Path, notes: Path,
                                           http_demo) -> None:  # type: ignore[no-untyped-def]
    (notes / "a.txt").write_text("over http")
    url = http_demo()
    hub = McpHub(tmp_path / "home", read_user_config=False, call_timeout=10)
    trusted_editor_servers(hub, {"remote": {"type": "http", "url": url,
                                       "headers": {"X-Test": "1"}}})
    try:
        tools = {t.name: t for t in await hub.tools_for(workspace)}
        assert tools["mcp__remote__read_note"].kind == "read"
        text, is_error = await _call(tools["mcp__remote__read_note"], workspace, name="a.txt")
        assert (text, is_error) == ("over http", False)
        [row] = hub.status(workspace)
        assert row["transport"] == "http" and row["target"] == url
    finally:
        await hub.aclose()
