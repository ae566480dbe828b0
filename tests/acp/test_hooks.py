"""Claude Code hooks over ACP: ``openprogram-lsp acp`` as a child process, a fake HOME whose
~/.claude/settings.json and a project's .claude/settings.json hold Claude Code-shaped hooks."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from acp import text_block
from tests.acp.client import RecordingClient, subprocess_agent, until
from tests.acp.test_mcp import assert_calls_announced_and_closed
from tests.hooks.helpers import hook_endpoint
from tests.lsp.conftest import write_script

DATA = Path(__file__).parent.parent / "hooks" / "data" / "claude"


async def test_user_and_project_claude_hooks_block_rewrite_and_add_context(
        home: Path, workspace: Path, tmp_path: Path) -> None:
    fake = tmp_path / "fakehome"
    (fake / ".claude").mkdir(parents=True)
    ended = tmp_path / "ended.json"
    start = json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                               "additionalContext": "Deploys are frozen."}})
    (fake / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": f"{sys.executable} {DATA / 'bash_validator.py'}"},
            {"type": "command",
             "command": f"{sys.executable} {DATA / 'rewrite_rm.py'} ask"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": f"printf '%s' '{start}'"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command":
                                   f"cat > {ended}"}]}]}}))
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": "echo 'no writes in this project' >&2; exit 2"}]}]}}))
    (workspace / "old.txt").write_text("x")
    model = write_script(tmp_path / "m.json", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "grep -r x ."}}]},
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "rm old.txt"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt",
                                                             "content": "y"}}]},
        {"text": "done"}])
    client = RecordingClient(answer="allow_once")
    env = {"HOME": str(fake), "CLAUDE_CONFIG_DIR": "", "OPENPROGRAM_MODEL": model,
           "OPENPROGRAM_SCRIPTED_LOG": str(tmp_path / "calls.jsonl")}
    async with subprocess_agent(client, home, workspace, env=env) as (conn, _proc):
        session = await conn.new_session(cwd=str(workspace))
        resp = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                  prompt=[text_block("go")]), 120)
        assert resp.stop_reason == "end_turn"
        await conn.close_session(session_id=session.session_id)
        await until(ended.exists, "SessionEnd")
    assert_calls_announced_and_closed(client)  # the hook trust prompt too
    asked = [entry for name, entry in client.log if name == "permission"]
    trust, rewritten = asked  # the project's hook was approved once, then the rewritten rm
    [definition] = trust["toolCall"].raw_input["definitions"]  # the user's hooks need none
    assert definition["source"] == ".claude/settings.json" and definition["matcher"] == "Write"
    assert rewritten["toolCall"].raw_input == {"command": "mkdir -p .bin && mv old.txt .bin/"}
    assert (workspace / ".bin" / "old.txt").exists() and not (workspace / "a.txt").exists()
    outputs = json.dumps([u.model_dump(mode="json") for u in client.updates("tool_call_update")])
    assert "Use 'rg' (ripgrep) instead of 'grep'" in outputs
    assert "no writes in this project" in outputs
    first = json.loads((tmp_path / "calls.jsonl").read_text().splitlines()[0])
    assert any("Deploys are frozen." in m["content"] for m in first["messages"])
    assert json.loads(ended.read_text())["hook_event_name"] == "SessionEnd"


async def test_project_http_and_prompt_hooks_and_a_project_enabled_plugin_over_acp(
        home: Path, workspace: Path, tmp_path: Path) -> None:
    """The project's .claude/settings.json (approved once on the trust card) holds an http
    hook that denies a deploy and a prompt Stop hook that sends the model back once, and
    enables a Claude Code plugin installed under ~/.claude/plugins whose guard (run with
    CLAUDE_PLUGIN_ROOT) refuses a generated file."""
    import shutil

    fake = tmp_path / "fakehome"
    root = fake / ".claude" / "plugins" / "cache" / "tests" / "guard" / "1.0.0"
    shutil.copytree(DATA / "plugin", root)
    (fake / ".claude" / "plugins" / "installed_plugins.json").write_text(json.dumps(
        {"version": 2, "plugins": {"guard@tests": [{"scope": "project",
                                                    "installPath": str(root)}]}}))
    model = write_script(tmp_path / "m.json", [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo deploy"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "api.gen.ts",
                                                             "content": "x"}}]},
        {"text": "done"},
        {"text": '{"ok": false, "reason": "say why nothing was deployed"}'},  # Stop hook
        {"text": "The deploy needs a ticket."},
        {"text": '{"ok": true}'}])
    log = tmp_path / "calls.jsonl"
    with hook_endpoint() as (url, seen):
        (workspace / ".claude").mkdir()
        (workspace / ".claude" / "settings.json").write_text(json.dumps({
            "enabledPlugins": {"guard@tests": True}, "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": url}]}],
                "Stop": [{"hooks": [{"type": "prompt",
                                     "prompt": "Is it explained? $ARGUMENTS"}]}]}}))
        client = RecordingClient(answer="allow_once")
        env = {"HOME": str(fake), "CLAUDE_CONFIG_DIR": "", "OPENPROGRAM_MODEL": model,
               "OPENPROGRAM_SCRIPTED_LOG": str(log)}
        async with subprocess_agent(client, home, workspace, env=env) as (conn, _proc):
            session = await conn.new_session(cwd=str(workspace))
            resp = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[text_block("go")]), 120)
        assert resp.stop_reason == "end_turn"
        [(_, body)] = seen
    assert body["tool_name"] == "Bash" and body["tool_input"]["command"] == "echo deploy"
    [trust] = [entry for name, entry in client.log if name == "permission"]
    kinds = {(d.get("type", "command"), d["event"])
             for d in trust["toolCall"].raw_input["definitions"]}
    assert kinds == {("http", "PreToolUse"), ("prompt", "Stop"), ("command", "PreToolUse")}
    outputs = json.dumps([u.model_dump(mode="json") for u in client.updates("tool_call_update")])
    assert "deploys need a ticket" in outputs
    assert f"generated file (guard plugin at {root})" in outputs
    assert not (workspace / "api.gen.ts").exists()
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls[3]["messages"][0]["content"].startswith("Is it explained? {")
    assert any("say why nothing was deployed" in m["content"] for m in calls[4]["messages"])
    assert "The deploy needs a ticket." in client.text()
