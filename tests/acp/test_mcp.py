"""MCP servers an ACP client passes in ``session/new`` are tools of the session's turns."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp.schema import EnvVariable, McpServerStdio

from acp import text_block
from tests.acp.client import RecordingClient, subprocess_agent
from tests.tools.mcp.demo import DEMO, HOSTILE, demo_def, python


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


def assert_calls_announced_and_closed(client: RecordingClient) -> None:
    """Every ``tool_call_update`` follows its ``tool_call``; every call ends completed or
    failed (ACP's order, which clients rely on to draw a call)."""
    shown: dict[str, str] = {}
    for name, item in client.log:
        if name == "permission":
            assert item["toolCall"].tool_call_id in shown, "asked about an unannounced call"
        if name != "update":
            continue
        if item.session_update == "tool_call":
            shown[item.tool_call_id] = item.status
        elif item.session_update == "tool_call_update":
            assert item.tool_call_id in shown, f"update for unannounced {item.tool_call_id}"
            shown[item.tool_call_id] = item.status or shown[item.tool_call_id]
    assert shown and all(s in ("completed", "failed") for s in shown.values()), shown


async def test_a_workspace_mcp_server_s_trust_prompt_is_a_call_of_its_own(
        home: Path, workspace: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (workspace / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"notes": demo_def(notes=notes)}}))
    for answer, status in (("reject_once", "failed"), ("allow_once", "completed")):
        client = RecordingClient(answer=answer)
        async with subprocess_agent(client, home, workspace) as (conn, _proc):
            session = await conn.new_session(cwd=str(workspace))
            resp = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[text_block("list .")]), 120)
        assert resp.stop_reason == "end_turn"
        trust = next(v for n, v in client.log if n == "permission")
        call_id = trust["toolCall"].tool_call_id
        assert ":mcp-trust:notes" in call_id
        assert [o.kind for o in trust["options"]] == ["allow_always", "allow_once",
                                                      "reject_once", "reject_always"]
        ups = [u for u in client.updates() if getattr(u, "tool_call_id", None) == call_id]
        assert [u.session_update for u in ups] == ["tool_call", "tool_call_update"]
        assert ups[0].status == "pending" and ups[1].status == status
        assert_calls_announced_and_closed(client)


async def test_a_tool_a_server_adds_later_is_announced_in_the_session(
        home: Path, workspace: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "mcp__h__grow", "arguments": {}}]}, {"text": "grown"},
        {"tool_calls": [{"name": "mcp__h__wipe", "arguments": {}}]}, {"text": "done"}]))
    (tmp_path / "precious.txt").write_text("keep me")
    server = McpServerStdio(name="h", command=python(), args=[str(HOSTILE)],
                            env=[EnvVariable(name="DEMO_DIR", value=str(tmp_path))])
    client = RecordingClient(answer="reject_once")
    async with subprocess_agent(client, home, workspace, "--model",
                                f"scripted:{script}") as (conn, _proc):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
        for text in ("grow", "look"):
            resp = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[text_block(text)]), 120)
            assert resp.stop_reason == "end_turn"
    assert "MCP server h added tools after it was trusted: wipe" in client.text()
    [added] = client.ext_events("mcp.tools_added")
    assert added["sessionId"] == session.session_id
    assert [t["tool"] for t in added["data"]["tools"]] == ["wipe"]
    # marked readOnlyHint, it still asked before its first call; rejected, it did nothing
    [asked] = [item for name, item in client.log if name == "permission"]
    assert asked["toolCall"].title.endswith("(added by MCP server h after it was trusted: "
                                            "first use)")
    assert (tmp_path / "precious.txt").read_text() == "keep me"
