"""Hooks over stdio: the trust prompt, a blocked call's reason, openprogram/hooks and /trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import OpClient, Starter, close_client, write_script

HOOKS = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": "echo 'no shell today' >&2; exit 2"}]}]}}
AGENT = "---\ndescription: Reads only\ntools: Read, Grep\n---\nYou read.\n"


async def test_trust_prompt_blocked_reason_listing_and_revoke(start: Starter, tmp_path: Path,
                                                              workspace: Path) -> None:
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "settings.json").write_text(json.dumps(HOOKS))
    (workspace / ".claude" / "agents" / "reader.md").write_text(AGENT)
    model = write_script(tmp_path / "m.json", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "touch ran"}}]},
        {"text": "It was refused."}])

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "allow_always"}

    client = await start(model=model, setup=setup)
    result = await client.call("openprogram/chat", {"text": "run it"})
    assert result["status"] == "done"
    [trust] = client.permission_requests  # the hook blocked the call before any approval
    assert trust["toolCall"]["name"] == "trust_workspace_definitions"
    kinds = sorted(d["kind"] for d in trust["toolCall"]["input"]["definitions"])
    assert kinds == ["agent", "hook"]
    assert not (workspace / "ran").exists()
    [finished] = client.of_type("tool.finished")
    assert finished["data"]["blockedReason"] == "no shell today"

    listing = await client.call("openprogram/hooks", {})
    [hook] = listing["hooks"]
    assert hook["event"] == "PreToolUse" and hook["matcher"] == "Bash"
    assert hook["trust"] == "trusted" and hook["active"] is True
    assert hook["lastResult"]["exitCode"] == 2 and hook["lastResult"]["outcome"] == "deny"
    agents = await client.call("openprogram/agents", {})
    [reader] = agents["definitions"]
    assert reader["name"] == "reader" and reader["tools"] == ["read_file", "grep"]
    assert reader["trust"] == "trusted"

    revoked = await client.call("openprogram/trust", {"id": hook["id"], "decision": "forget"})
    assert revoked == {"id": hook["id"], "trust": "unknown"}
    again = await client.call("openprogram/hooks", {})
    assert again["hooks"][0]["trust"] == "unknown" and again["hooks"][0]["active"] is False

    with pytest.raises(JsonRpcException) as bad:
        await client.call("openprogram/trust", {"id": hook["id"], "decision": "maybe"})
    assert bad.value.code == -32602 and "decision" in str(bad.value)
    with pytest.raises(JsonRpcException) as unknown:
        await client.call("openprogram/trust", {"id": "hnope", "decision": "trust"})
    assert unknown.value.code == -32001
    assert (await client.call("openprogram/hooks", {}))["hooks"]  # still serving


async def test_claude_code_hooks_from_the_users_and_the_projects_files_decide_over_stdio(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    """~/.claude/settings.json (a fake HOME) holds a Bash validator and an rm rewriter that
    asks; the project's .claude/settings.local.json allows writes: block, rewrite + ask, allow."""
    import sys

    data = Path(__file__).parent.parent / "hooks" / "data" / "claude"
    fake = tmp_path / "fakehome"
    (fake / ".claude").mkdir(parents=True)
    ended = tmp_path / "ended.json"
    (fake / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [
            {"type": "command", "command": f"{sys.executable} {data / 'bash_validator.py'}"},
            {"type": "command", "command": f"{sys.executable} {data / 'rewrite_rm.py'} ask"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": f"cat > {ended}"}]}]}}))
    allow = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                               "permissionDecision": "allow"}})
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.local.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": f"printf '%s' '{allow}'"}]}]}}))
    (workspace / "old.txt").write_text("x")
    model = write_script(tmp_path / "m.json", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "grep -r x ."}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "rm old.txt"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt",
                                                             "content": "y"}}]},
        {"text": "done"}])

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            trust = params["toolCall"]["name"] == "trust_workspace_definitions"
            return {"outcome": "selected", "optionId": "allow_always" if trust
                    else "allow_once"}

    client = await start(model=model, setup=setup,
                         extra_env={"HOME": str(fake), "CLAUDE_CONFIG_DIR": ""})
    result = await client.call("openprogram/chat", {"text": "go"})
    assert result["status"] == "done"
    trust, rewritten = client.permission_requests  # the write needed no prompt
    assert [d["source"] for d in trust["toolCall"]["input"]["definitions"]] == [
        ".claude/settings.local.json"]
    assert rewritten["toolCall"]["input"] == {"command": "mkdir -p .bin && mv old.txt .bin/"}
    blocked = client.of_type("tool.finished")[0]["data"]
    assert "Use 'rg' (ripgrep) instead of 'grep'" in blocked["blockedReason"]
    assert (workspace / ".bin" / "old.txt").exists() and (workspace / "a.txt").read_text() == "y"
    listing = await client.call("openprogram/hooks", {})
    sources = {h["source"] for h in listing["hooks"]}
    assert sources == {str(fake / ".claude" / "settings.json"), ".claude/settings.local.json"}
    records = await client.call("openprogram/rules", {"sessionId": result["sessionId"],
                                                      "records": True})
    by = {r["tool"]: r["by"] for r in records["records"]}
    assert by["write_file"] == "hook"  # the hook's allow is on record as such
    assert await close_client(client) == ""  # shutdown ends the session: its SessionEnd ran
    end = json.loads(ended.read_text())
    assert end["hook_event_name"] == "SessionEnd" and end["session_id"] == result["sessionId"]
