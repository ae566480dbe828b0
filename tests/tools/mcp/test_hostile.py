"""A hostile MCP server over real stdio: an answer over the message limit fails its call at
once naming the limit (wherever the answer puts its id), and tools it adds after it was
trusted are announced and ask before their first call."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.tools.base import Tool, ToolContext
from openprogram_lsp.tools.mcp import McpHub
from openprogram_lsp.tools.mcp.stdio import MAX_MESSAGE
from tests.tools.mcp.demo import hostile_def, trusted_editor_servers

pytestmark = pytest.mark.timeout(180)


async def _call(tool: Tool, ws: Path, **arguments: object) -> tuple[str, bool]:
    out = await tool.run(tool.parse(dict(arguments)), ToolContext(workspace=ws))
    return out.text, out.is_error


@pytest.mark.parametrize("flags", [(), ("--id-last",), ("--id-hidden",)],
                         ids=["id-first", "id-last", "id-hidden"])
async def test_an_answer_over_the_limit_fails_its_call_at_once(
        flags: tuple[str, ...], tmp_path: Path, workspace: Path) -> None:
    hub = McpHub(tmp_path / "home", read_user_config=False, call_timeout=120)
    trusted_editor_servers(hub, {"h": hostile_def(*flags)})
    try:
        tools = {t.name: t for t in await hub.tools_for(workspace)}
        started = time.monotonic()
        text, is_error = await _call(tools["mcp__h__flood"], workspace,
                                     size=MAX_MESSAGE + 2 ** 20)
        elapsed = time.monotonic() - started
        assert is_error, text
        assert "over the 64 MiB limit of one MCP message" in text, text
        assert "did not answer" not in text
        assert elapsed < 60, elapsed  # not the 120 s call timeout
        # the server and the connection serve on
        assert await _call(tools["mcp__h__hello"], workspace) == ("hello", False)
        [row] = hub.status(workspace)
        assert row["status"] == "ready" and row["restarts"] == 0
    finally:
        await hub.aclose()


async def test_a_tool_added_after_trust_is_announced_and_asks_first(
        tmp_path: Path, workspace: Path) -> None:
    hub = McpHub(tmp_path / "home", read_user_config=False, call_timeout=30)
    announced: list[tuple[Path, str, list[dict[str, Any]]]] = []
    hub.on_tools_added = lambda ws, server, tools: announced.append((ws, server, tools))
    trusted_editor_servers(hub, {"h": hostile_def(notes=tmp_path)})
    try:
        tools = {t.name: t for t in await hub.tools_for(workspace)}
        assert "mcp__h__wipe" not in tools
        assert all(t.must_ask() is None for t in tools.values())
        assert await _call(tools["mcp__h__grow"], workspace) == ("grown", False)
        for _ in range(2000):
            if announced:
                break
            await asyncio.sleep(0.01)
        [(where, server, added)] = announced
        assert where == workspace.resolve()
        assert (server, [t["tool"] for t in added]) == ("h", ["wipe"])
        assert added[0]["name"] == "mcp__h__wipe" and added[0]["kind"] == "read"
        tools = {t.name: t for t in await hub.tools_for(workspace)}
        wipe = tools["mcp__h__wipe"]
        assert wipe.kind == "read"  # what the server claims
        reason = wipe.must_ask()
        assert reason is not None and "added by MCP server h after it was trusted" in reason
        wipe.approved()
        assert wipe.must_ask() is None
        assert tools["mcp__h__hello"].must_ask() is None
    finally:
        await hub.aclose()
