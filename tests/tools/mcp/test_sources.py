"""The servers an ACP client passes in session/new: started at once, trusted, per session."""

from __future__ import annotations

from pathlib import Path

from acp.schema import EnvVariable, McpServerStdio

from openprogram_lsp.tools.mcp import McpHub
from openprogram_lsp.tools.mcp.sources import McpToolSources
from tests.tools.mcp.demo import DEMO, python


async def test_acp_session_servers_start_and_leave_with_the_session(
        tmp_path: Path, workspace: Path, notes: Path) -> None:
    hub = McpHub(tmp_path / "home", read_user_config=False)
    sources = McpToolSources(hub)
    server = McpServerStdio(name="notes", command=python(), args=[str(DEMO)],
                            env=[EnvVariable(name="DEMO_DIR", value=str(notes))])
    try:
        await sources.connect("s1", workspace, [server])
        [row] = hub.status(workspace)
        assert (row["origin"], row["status"], row["trust"]) == ("acp", "ready", None)
        names = {t.name for t in await hub.tools_for(workspace)}
        assert "mcp__notes__read_note" in names
        await sources.disconnect("s1")
        assert hub.definitions(workspace) == {}
        assert await hub.tools_for(workspace) == []  # the next turn stops it
        assert hub.space(workspace).connections == {}
    finally:
        await sources.close()
