"""MCP tools over the real LSP transport: trust first, then the same gate as built-ins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from openprogram_lsp.core.types import PermissionRequest, PermissionToolCall
from openprogram_lsp.lsp.prompts import _describe
from tests.lsp.conftest import OpClient, Starter, write_script
from tests.tools.mcp.demo import demo_def


def _calls(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}, {"text": "Done."}]


async def test_mcp_tools_are_governed_like_built_ins(start: Starter, tmp_path: Path,
                                                     workspace: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("note a")
    (workspace / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"notes": demo_def(notes=notes)}}))
    model = write_script(tmp_path / "script.json", [
        *_calls(("mcp__notes__read_note", {"name": "a.txt"}),
                ("mcp__notes__delete_note", {"name": "a.txt"}),
                ("mcp__notes__count", {"n": 3})),
        *_calls(("mcp__notes__pid", {})),
        *_calls(("mcp__notes__pid", {})),
        {"text": "Reviewed."},
    ])

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            call = params["toolCall"]
            if ":mcp-trust:" in call["toolCallId"]:
                return {"outcome": "selected", "optionId": "allow_always"}
            allow = call["name"] == "mcp__notes__pid"
            return {"outcome": "selected", "optionId": "allow_once" if allow else "reject_once"}

    client = await start(model=model, setup=setup,
                         init_options={"disabledTools": ["mcp__notes__count"]})
    result = await client.call("openprogram/chat", {"text": "tidy the notes"})
    assert result["status"] == "done", result

    trust, delete = client.permission_requests  # nothing asked for the read-only tool
    assert "Start MCP server 'notes' from .mcp.json" in trust["toolCall"]["title"]
    assert trust["toolCall"]["input"]["definition"]["args"][0].endswith("demo_server.py")
    assert delete["toolCall"]["name"] == "mcp__notes__delete_note"
    assert delete["toolCall"]["kind"] == "delete"
    assert delete["toolCall"]["mcp"] == {"server": "notes", "tool": "delete_note",
                                         "description": "Delete a note."}
    assert delete["toolCall"]["input"] == {"name": "a.txt"}
    assert (notes / "a.txt").read_text() == "note a"  # the rejected call did nothing

    finished = {e["data"]["toolCallId"]: e["data"] for e in client.of_type("tool.finished")}
    started = [e["data"] for e in client.of_type("tool.started")]
    by_name = {s["name"]: finished[s["toolCallId"]] for s in started}
    assert by_name["mcp__notes__read_note"] == {
        "toolCallId": by_name["mcp__notes__read_note"]["toolCallId"],
        "status": "completed", "output": "note a"}
    assert by_name["mcp__notes__delete_note"]["status"] == "failed"
    assert "rejected" in by_name["mcp__notes__delete_note"]["output"]
    assert "disabled by configuration" in by_name["mcp__notes__count"]["output"]
    assert started[0]["mcp"] == {"server": "notes", "tool": "read_note"}

    status = await client.call("openprogram/mcp", {})
    [server] = status["servers"]
    assert (server["name"], server["origin"], server["status"], server["trust"]) == (
        "notes", "workspace", "ready", "allow")
    assert {"name": "mcp__notes__echo", "tool": "echo", "kind": "read",
            "description": "Echo the text back."} in server["tools"]
    assert [t["server"] for t in status["trust"]] == ["notes"]

    async def pid() -> str:
        before = len(client.of_type("tool.finished"))
        turn = await client.call("openprogram/chat", {"text": "pid",
                                                      "sessionId": result["sessionId"]})
        assert turn["status"] == "done", turn
        [out] = [e["data"] for e in client.of_type("tool.finished")[before:]]
        assert out["status"] == "completed", out
        return str(out["output"])

    first = await pid()
    asked = [r["toolCall"]["name"] for r in client.permission_requests[2:]]
    assert asked == ["mcp__notes__pid"]  # trust is remembered: not asked again
    restarted = await client.call("openprogram/mcpRestart", {"server": "notes"})
    assert restarted["restarted"] == ["notes"]
    assert restarted["servers"][0]["status"] == "ready"
    assert await pid() != first

    # a prompt as a slash command and a resource reference: the model reads the expansion
    turn = await client.call("openprogram/chat", {
        "text": "/mcp__notes__review code=x=1 @notes:note://readme",
        "sessionId": result["sessionId"]})
    assert turn["status"] == "done", turn
    history = await client.call("openprogram/history", {"sessionId": result["sessionId"]})
    user = next(n for n in history["nodes"] if n["id"] == turn["userNodeId"])
    assert user["text"] == "/mcp__notes__review code=x=1 @notes:note://readme"
    assert user["metadata"]["modelText"].startswith("Please review this code carefully:\nx=1")
    assert "[attached @notes:note://readme]\nNotes are plain text files." in \
        user["metadata"]["modelText"]

    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/mcpRestart", {"server": "nope"})
    assert "nope" in info.value.message
    revoked = await client.call("openprogram/mcpRevokeTrust", {"server": "notes"})
    assert revoked == {"revoked": True}
    after = await client.call("openprogram/mcp", {})
    assert after["trust"] == [] and after["servers"][0]["status"] == "stopped"


def test_show_message_request_names_server_tool_and_arguments() -> None:
    request = PermissionRequest(session_id="s", turn_id="t", tool_call=PermissionToolCall(
        tool_call_id="c", name="mcp__gh__create_issue", kind="other",
        title="MCP gh: create_issue", input={"title": "Bug", "zbody": "x" * 5000},
        mcp={"server": "gh", "tool": "create_issue"}))
    text = _describe(request)
    assert "MCP server: gh" in text and "tool: create_issue" in text
    assert '"title": "Bug"' in text and "more characters" in text


async def test_editor_mcp_servers_are_asked_about_once_per_definition(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    """``mcpServers`` in the initialization options (a workspace's .vscode/settings.json could
    hold them) start only once the user trusts them, like a .mcp.json: asked once per exact
    definition, remembered across restarts; a changed definition asks again."""
    notes = tmp_path / "notes"
    notes.mkdir()
    answers = iter(["reject_once", "allow_always"])

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": next(answers, "reject_once")}

    steps = [*_calls(("mcp__notes__echo", {"text": "hi"})), {"text": "spare"}]
    options = {"mcpServers": {"notes": demo_def(notes=notes)}}
    first = await start(model=write_script(tmp_path / "a.json", steps), setup=setup,
                        init_options=options)
    refused = await first.call("openprogram/chat", {"text": "echo"})
    assert refused["status"] == "done", refused
    [asked] = first.permission_requests
    assert "Start MCP server 'notes' from the editor's mcpServers setting" in \
        asked["toolCall"]["title"]
    [out] = [e["data"]["output"] for e in first.of_type("tool.finished")]
    assert "Unknown tool 'mcp__notes__echo'" in out  # never started: no tool

    allowing = await start(model=write_script(tmp_path / "b.json", steps), setup=setup,
                           init_options=options)  # a new server, the same state root
    assert (await allowing.call("openprogram/chat", {"text": "echo"}))["status"] == "done"
    assert len(allowing.permission_requests) == 1
    assert [e["data"]["output"] for e in allowing.of_type("tool.finished")] == ["hi"]
    status = await allowing.call("openprogram/mcp", {})
    assert [(s["origin"], s["trust"]) for s in status["servers"]] == [("editor", "allow")]

    again = await start(model=write_script(tmp_path / "c.json", steps), setup=setup,
                        init_options=options)
    assert (await again.call("openprogram/chat", {"text": "echo"}))["status"] == "done"
    assert again.permission_requests == []  # remembered: not asked twice
    changed = {"mcpServers": {"notes": demo_def("--garbage", notes=notes)}}
    other = await start(model=write_script(tmp_path / "d.json", steps), setup=setup,
                        init_options=changed)
    assert (await other.call("openprogram/chat", {"text": "echo"}))["status"] == "done"
    assert len(other.permission_requests) == 1  # another definition: asked again
