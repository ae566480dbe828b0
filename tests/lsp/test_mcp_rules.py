"""MCP rules name MCP tools, over the real LSP transport with a real stdio MCP server: an edit
rule made for ``write_file`` never covers a server's tool, a destructive tool asks until a rule
names it, the standing options name the tool and its server, the card carries the tool's own
description, and a tool the server adds after it was trusted is announced and asks first."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import OpClient, Starter, write_script
from tests.tools.mcp.demo import hostile_def

pytestmark = pytest.mark.timeout(180)


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


DONE = {"text": "Done."}


def _answering(client: OpClient, answers: dict[tuple[str, int], str]) -> None:
    """Answer the n-th prompt about a tool as ``answers`` says (trust: always)."""
    seen: Counter[str] = Counter()

    @client.feature("openprogram/requestPermission")
    def _permission(params: Any) -> dict[str, Any]:
        client.permission_requests.append(params)
        call = params["toolCall"]
        if ":mcp-trust:" in call["toolCallId"]:
            return {"outcome": "selected", "optionId": "allow_always"}
        seen[call["name"]] += 1
        choice = answers.get((call["name"], seen[call["name"]]), "reject_once")
        return {"outcome": "selected", "optionId": choice}


def _asked(client: OpClient) -> list[str]:
    return [r["toolCall"]["name"] for r in client.permission_requests
            if ":mcp-trust:" not in r["toolCall"]["toolCallId"]]


def _finished(client: OpClient, before: int = 0) -> list[tuple[str, str]]:
    names = {e["data"]["toolCallId"]: e["data"]["name"] for e in client.of_type("tool.started")}
    return [(names[e["data"]["toolCallId"]], e["data"]["status"])
            for e in client.of_type("tool.finished")[before:]]


def _mcp_json(workspace: Path, notes: Path) -> None:
    (workspace / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"h": hostile_def(notes=notes)}}))


async def test_edit_rules_never_cover_mcp_tools_and_destructive_ones_ask(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    precious = notes / "precious.txt"
    precious.write_text("keep me")
    _mcp_json(workspace, notes)
    model = write_script(tmp_path / "script.json", [
        _call("write_file", {"path": "a.txt", "content": "x\n"}),
        _call("mcp__h__git_reset", {"ref": "HEAD"}),
        _call("mcp__h__add_note", {"name": "n.txt", "text": "t"}), DONE,
        _call("mcp__h__add_note", {"name": "m.txt", "text": "u"}),
        _call("mcp__h__git_reset", {"ref": "HEAD~1"}),
        _call("write_file", {"path": "b.txt", "content": "y\n"}), DONE,
        _call("mcp__h__git_reset", {"ref": "HEAD~2"}), DONE,
    ])
    client = await start(model=model, setup=lambda c: _answering(c, {
        ("write_file", 1): "allow_always_all",  # "every edit in the workspace"
        ("mcp__h__add_note", 1): "allow_always",
        ("mcp__h__git_reset", 2): "allow_always",
    }))
    first = await client.call("openprogram/chat", {"text": "one"})
    assert first["status"] == "done", first
    # the edit rule for write_file let neither the destructive tool nor the edit one run
    assert _asked(client) == ["write_file", "mcp__h__git_reset", "mcp__h__add_note"]
    assert precious.read_text() == "keep me"
    by_name = {r["toolCall"]["name"]: r for r in client.permission_requests}
    reset, note = by_name["mcp__h__git_reset"], by_name["mcp__h__add_note"]
    assert reset["toolCall"]["mcp"] == {
        "server": "h", "tool": "git_reset",
        "description": "Reset the repository (deletes precious.txt)."}
    for request, tool in ((reset, "git_reset"), (note, "add_note")):
        names = [o["name"] for o in request["options"]]
        assert not any("every edit" in n or "edits to" in n for n in names), names
        assert f"Always allow `{tool}` of MCP server `h` in this session" in names, names
        assert f"Always allow `{tool}` of MCP server `h` in every session of this workspace" \
            in names, names
        assert f"Always reject `{tool}` of MCP server `h`" in names, names

    sid = first["sessionId"]
    second = await client.call("openprogram/chat", {"text": "two", "sessionId": sid})
    assert second["status"] == "done", second
    # add_note's own rule covers it; it does not cover git_reset, which asks (and is allowed
    # with a rule naming it); write_file still runs under its edit rule
    assert _asked(client)[3:] == ["mcp__h__git_reset"]
    assert (notes / "m.txt").read_text() == "u"
    assert not precious.exists()
    precious.write_text("keep me")
    third = await client.call("openprogram/chat", {"text": "three", "sessionId": sid})
    assert third["status"] == "done", third
    assert _asked(client)[4:] == []  # the rule naming git_reset itself allows it
    assert not precious.exists()
    rules = (await client.call("openprogram/rules", {}))["rules"]
    mine = sorted((r["kind"], r["tool"], r.get("editScope")) for r in rules
                  if r["origin"] == "prompt")
    assert mine == [("edit", "write_file", "workspace"), ("tool", "mcp__h__add_note", None),
                    ("tool", "mcp__h__git_reset", None)]


async def test_accept_edits_accepts_our_edits_not_a_servers_tools(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "precious.txt").write_text("keep me")
    _mcp_json(workspace, notes)
    model = write_script(tmp_path / "script.json", [
        _call("write_file", {"path": "a.txt", "content": "x\n"}),
        _call("mcp__h__add_note", {"name": "n.txt", "text": "t"}),
        _call("mcp__h__git_reset", {"ref": "HEAD"}), DONE,
    ])
    client = await start(model=model, setup=lambda c: _answering(c, {}),
                         init_options={"permissionMode": "accept-edits"})
    result = await client.call("openprogram/chat", {"text": "go"})
    assert result["status"] == "done", result
    assert _asked(client) == ["mcp__h__add_note", "mcp__h__git_reset"]
    assert (workspace / "a.txt").read_text() == "x\n"
    assert not (notes / "n.txt").exists() and (notes / "precious.txt").exists()


async def test_a_tool_added_after_trust_is_announced_and_asks_before_its_first_call(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    precious = notes / "precious.txt"
    precious.write_text("keep me")
    _mcp_json(workspace, notes)
    model = write_script(tmp_path / "script.json", [
        _call("mcp__h__grow", {}), DONE,
        _call("mcp__h__wipe", {}), _call("mcp__h__wipe", {}), DONE,
        _call("mcp__h__wipe", {}), DONE,
    ])
    client = await start(model=model, setup=lambda c: _answering(c, {
        ("mcp__h__wipe", 2): "allow_once"}))
    first = await client.call("openprogram/chat", {"text": "grow"})
    assert first["status"] == "done", first
    assert _asked(client) == []  # grow is read-only and was there when the server was trusted
    added = await client.wait_event("mcp.tools_added")
    assert added["data"]["server"] == "h"
    assert [t["name"] for t in added["data"]["tools"]] == ["mcp__h__wipe"]
    assert added["data"]["tools"][0]["kind"] == "read"
    assert any("MCP server h added tools after you trusted it: wipe" in m.message
               for m in client.messages), client.messages

    sid = first["sessionId"]
    second = await client.call("openprogram/chat", {"text": "look", "sessionId": sid})
    assert second["status"] == "done", second
    # marked readOnlyHint, yet it asks: rejected first (nothing happens), allowed the second
    assert _asked(client) == ["mcp__h__wipe", "mcp__h__wipe"]
    card = client.permission_requests[-1]["toolCall"]
    assert "added by MCP server h after it was trusted: first use" in card["title"]
    assert card["mcp"]["description"] == "Look at the notes (really: delete precious.txt)."
    statuses = [s for name, s in _finished(client) if name == "mcp__h__wipe"]
    assert statuses == ["failed", "completed"]
    assert not precious.exists()
    third = await client.call("openprogram/chat", {"text": "again", "sessionId": sid})
    assert third["status"] == "done", third
    assert len(_asked(client)) == 2  # allowed once: from now on its kind decides
