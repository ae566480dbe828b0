"""Hooks over stdio: the trust prompt, a blocked call's reason, openprogram/hooks and /trust."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.hooks.helpers import hook_endpoint
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


Seen = list[tuple[dict[str, str], dict[str, Any]]]


@pytest.fixture
def endpoint() -> Iterator[tuple[str, Seen]]:
    """A loopback http hook (tests/hooks/helpers.hook_endpoint)."""
    with hook_endpoint() as found:
        yield found


async def test_http_prompt_agent_async_hooks_and_a_permission_rewrite_over_stdio(
        start: Starter, tmp_path: Path, workspace: Path,
        endpoint: tuple[str, Seen]) -> None:
    """Claude Code's other hook types from ~/.claude/settings.json: an http hook denies a
    Bash call (with an allowed header variable, and one it may not read), a prompt hook
    refuses a write, a PermissionRequest hook allows a write rewritten, an agent Stop hook
    reads the file and sends the model back once, and an async PostToolUse hook's message
    reaches the next turn."""
    url, seen = endpoint
    fake = tmp_path / "fakehome"
    (fake / ".claude").mkdir(parents=True)
    rewrite = json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                 "decision": {"behavior": "allow", "updatedInput": {
                                                     "file_path": str(workspace / "out.txt"),
                                                     "content": "rewritten"}}}})
    late = json.dumps({"systemMessage": "background lint found nothing"})
    (fake / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "http", "url": url, "headers": {
                "Authorization": "Bearer $HOOK_TOKEN", "X-Other": "${OTHER_SECRET}"},
                "allowedEnvVars": ["HOOK_TOKEN"]}]},
            {"matcher": "Write", "hooks": [{"type": "prompt", "model": "haiku",
                                            "prompt": "Refuse writes of keys: $ARGUMENTS"}]}],
        "PermissionRequest": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": f"printf '%s' '{rewrite}'"}]}],
        "PostToolUse": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": f"printf '%s' '{late}'", "async": True}]}],
        "Stop": [{"hooks": [{"type": "agent", "prompt": "Did it say what it wrote?"}]}]}}))
    log = tmp_path / "calls.jsonl"
    model = write_script(tmp_path / "m.json", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo deploy now"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "secret.txt",
                                                             "content": "API_KEY=123"}}]},
        {"text": '{"ok": false, "reason": "that writes a key"}'},  # the prompt hook
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "draft.txt",
                                                             "content": "x"}}]},
        {"text": '```json\n{"ok": true}\n```'},  # the prompt hook: no objection
        {"text": "done"},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "out.txt"}}]},  # agent
        {"text": '{"ok": false, "reason": "say what you wrote"}'},
        {"text": "I wrote out.txt"},
        {"text": '{"ok": true}'},  # the agent hook, again
        {"text": "second turn"},
        {"text": '{"ok": true}'}])

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "reject_once"}

    client = await start(model=model, setup=setup, extra_env={
        "HOME": str(fake), "CLAUDE_CONFIG_DIR": "", "HOOK_TOKEN": "tok123",
        "OTHER_SECRET": "must-not-leave", "OPENPROGRAM_SCRIPTED_LOG": str(log)})
    result = await client.call("openprogram/chat", {"text": "go"})
    assert result["status"] == "done"
    assert client.permission_requests == []  # the hooks decided every call
    [(headers, body)] = seen
    assert headers["Authorization"] == "Bearer tok123" and headers["X-Other"] == ""
    assert body["tool_name"] == "Bash"
    assert body["tool_input"]["command"] == "echo deploy now"
    deploy, secret, draft = (f["data"] for f in client.of_type("tool.finished"))
    assert deploy["blockedReason"] == "deploys need a ticket"
    assert secret["blockedReason"] == "that writes a key"
    assert draft["status"] == "completed"
    assert not (workspace / "secret.txt").exists() and not (workspace / "draft.txt").exists()
    assert (workspace / "out.txt").read_text() == "rewritten"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    judged = calls[2]["messages"][0]["content"]  # the prompt hook saw Claude Code's Write
    assert judged.startswith("Refuse writes of keys: {") and calls[2]["tools"] == []
    assert json.loads(judged.split(": ", 1)[1])["tool_input"]["file_path"] == str(
        workspace / "secret.txt")
    assert calls[6]["tools"] == ["read_file", "grep", "find_files", "list_dir"]
    assert calls[7]["messages"][-1]["content"].endswith("\trewritten")  # it read the file
    assert any("say what you wrote" in m["content"] for m in calls[8]["messages"])
    records = await client.call("openprogram/rules", {"sessionId": result["sessionId"],
                                                      "records": True})
    [written] = [r for r in records["records"] if r["tool"] == "write_file"]
    assert written["by"] == "hook"
    for _ in range(200):  # the async hook's note is kept before its run is listed
        listing = (await client.call("openprogram/hooks", {}))["hooks"]
        if any(h["background"] and h["lastResult"] for h in listing):
            break
        await asyncio.sleep(0.05)
    assert {h["type"] for h in listing} == {"http", "prompt", "command", "agent"}
    again = await client.call("openprogram/chat", {"text": "next",
                                                   "sessionId": result["sessionId"]})
    assert again["status"] == "done"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert any("background lint found nothing" in m["content"]
               for m in calls[10]["messages"])
