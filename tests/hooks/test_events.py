"""Claude Code's other events in real turns: SessionStart context reaching the model,
SessionEnd, PostToolUseFailure, SubagentStart/SubagentStop inputs."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from tests.hooks.helpers import call, on, script_hook, text, user_settings

Make = Callable[..., Dispatcher]
pytestmark = pytest.mark.timeout(120)


def recorder(tmp_path: Path, name: str, answer: str = "") -> tuple[str, Path]:
    """A hook appending its input to NAME.jsonl and printing ``answer``."""
    log = tmp_path / f"{name}.jsonl"
    cmd = script_hook(tmp_path, name, f"open({str(log)!r}, 'a').write(sys.stdin.read() + "
                      f"'\\n')\nsys.stdout.write({answer!r})\n")
    return cmd, log


def seen(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_session_start_context_reaches_the_model_once_per_session(
        make_dispatcher: Make, script: Callable, workspace: Path, tmp_path: Path) -> None:
    answer = json.dumps({"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": "Open issues: #12 flaky CI"}})
    cmd, log = recorder(tmp_path, "start", answer)
    plain, _ = recorder(tmp_path, "plain", "Branch: feature/x")
    user_settings({"hooks": {"SessionStart": [
        {"matcher": "startup", "hooks": [{"type": "command", "command": cmd}]},
        {"hooks": [{"type": "command", "command": plain}]}]}})
    model_log = tmp_path / "model.jsonl"
    d = make_dispatcher(script([text("one"), text("two")]), settings=load_settings(
        env={"OPENPROGRAM_SCRIPTED_LOG": str(model_log)}, user_file=False))
    first = d.process_user_turn(TurnRequest(text="hi"))
    d.process_user_turn(TurnRequest(text="again", session_id=first.session_id))
    [start] = seen(log)
    assert start["hook_event_name"] == "SessionStart" and start["source"] == "startup"
    calls = [json.loads(line) for line in model_log.read_text().splitlines()]
    told = [m["content"] for m in calls[0]["messages"]]
    assert any("Open issues: #12 flaky CI" in c and "Branch: feature/x" in c for c in told)
    later = [m["content"] for m in calls[1]["messages"]]
    assert sum("Open issues" in c for c in later) == 1  # stored once, not said again


def test_session_end_runs_when_the_session_ends(
        make_dispatcher: Make, script: Callable, workspace: Path, tmp_path: Path) -> None:
    cmd, log = recorder(tmp_path, "end")
    user_settings(on("SessionEnd", cmd))
    d = make_dispatcher(script([text("ok")]))
    r = d.process_user_turn(TurnRequest(text="hi"))
    assert not log.exists()
    d.services.hooks.end_sessions("prompt_input_exit")  # type: ignore[union-attr]
    [end] = seen(log)
    assert end["hook_event_name"] == "SessionEnd" and end["reason"] == "prompt_input_exit"
    assert end["session_id"] == r.session_id
    assert Path(end["transcript_path"]).name == "main.jsonl"
    d.services.hooks.end_sessions("other")  # type: ignore[union-attr]
    assert len(seen(log)) == 1  # once


def test_post_tool_use_failure_gets_the_error(
        make_dispatcher: Make, script: Callable, workspace: Path, tmp_path: Path) -> None:
    cmd, log = recorder(tmp_path, "failure")
    ok_cmd, ok_log = recorder(tmp_path, "success")
    user_settings({"hooks": {
        "PostToolUseFailure": [{"matcher": "Bash", "hooks": [{"command": cmd}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"command": ok_cmd}]}]}})
    d = make_dispatcher(script([call("run_command", command="echo out; exit 3"),
                                call("run_command", command="echo fine"), text("ok")]),
                        permission_mode="bypass")
    d.process_user_turn(TurnRequest(text="go"))
    [failed] = seen(log)
    assert failed["tool_name"] == "Bash" and failed["tool_input"]["command"].endswith("exit 3")
    assert "exit code 3" in failed["error"] and failed["is_interrupt"] is False
    [ok] = seen(ok_log)
    assert ok["tool_response"]["stdout"] == "fine" and ok["tool_response"]["interrupted"] is False


def test_the_cli_chat_runs_session_end_as_it_exits(tmp_path: Path) -> None:
    from tests.test_cli import run as cli

    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    out = tmp_path / "ended.json"
    cfg = tmp_path / "xdg" / "openprogram-lsp"
    cfg.mkdir(parents=True)
    (cfg / "settings.json").write_text(json.dumps(on(
        "SessionEnd", f"{sys.executable} -c \"import sys; open({str(out)!r}, 'w')"
        f".write(sys.stdin.read())\"")))
    r = cli(["chat", "--workspace", str(ws), "hello"], home, tmp_path,
            XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["reason"] == "prompt_input_exit"
