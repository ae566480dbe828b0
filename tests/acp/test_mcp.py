"""MCP servers an ACP client passes in ``session/new`` are tools of the session's turns."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp.schema import EnvVariable, McpServerStdio

from acp import text_block
from tests.acp.client import RecordingClient, subprocess_agent
from tests.tools.mcp.demo import DEMO, python


async def test_session_mcp_server_tool_runs_in_a_turn(home: Path, workspace: Path,
                                                       tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "mcp__demo__echo", "arguments": {"text": "over mcp"}}]},
        {"text": "done"}]))
    server = McpServerStdio(name="demo", command=python(), args=[str(DEMO)],
                            env=[EnvVariable(name="DEMO_DIR", value=str(tmp_path))])
    client = RecordingClient()
    async with subprocess_agent(client, home, workspace, "--model",
                                f"scripted:{script}") as (conn, _proc):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
        resp = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                  prompt=[text_block("go")]), 120)
    assert resp.stop_reason == "end_turn"
    done = client.updates("tool_call_update")[-1]
    assert done.status == "completed" and "over mcp" in done.raw_output["output"]
