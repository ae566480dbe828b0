"""The command line through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.forkserver import run_command


def run(args: list[str], home: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "OPENPROGRAM_HOME": str(home), **env}
    full_env.pop("OPENPROGRAM_MODEL", None)
    return run_command([sys.executable, "-m", "openprogram_lsp", *args], cwd=cwd,
                       env=full_env, timeout=60)


def test_offline_model_writes_a_file_and_history_shows_it(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    r = run(["chat", "--workspace", str(ws), "--permission-mode", "accept-edits", "--json",
             "write notes/hello.md\n# Hello\nfrom the offline model"], home, tmp_path)
    assert r.returncode == 0, r.stderr
    assert (ws / "notes/hello.md").read_text() == "# Hello\nfrom the offline model\n"
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["data"]["status"] == "done"
    types = [x["type"] for x in lines]
    assert "text.delta" in types and "tool.started" in types and "tool.finished" in types
    for ev in lines[:-1]:
        assert set(ev) >= {"type", "sessionId", "data"}
    sid = lines[-1]["data"]["sessionId"]
    hist = run(["history", sid], home, tmp_path)
    assert hist.returncode == 0 and "write notes/hello.md" in hist.stdout
    assert "Write notes/hello.md [edit] completed" in hist.stdout
    sessions = run(["sessions", "--json"], home, tmp_path)
    assert json.loads(sessions.stdout)[0]["id"] == sid


def test_non_tty_denies_what_needs_asking_with_instructions(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    r = run(["chat", "--workspace", str(ws), "write a.txt\nx"], home, tmp_path)
    assert r.returncode == 3  # a refusal is not a success: scripts must notice
    assert not (ws / "a.txt").exists()
    assert "--permission-mode" in r.stdout
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("openprogram-lsp: error: 1 tool call(s) needed approval")


def test_failed_turn_exits_non_zero(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"error": "model down"}]))
    r = run(["chat", "--workspace", str(ws), "--model", f"scripted:{script}", "hi"], home,
            tmp_path)
    assert r.returncode == 1 and "model down" in r.stderr


def test_the_model_is_told_the_cli_has_no_language_servers(tmp_path: Path) -> None:
    """No editor answers diagnostics or navigation here: the system prompt says so, once."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    script, log = tmp_path / "s.json", tmp_path / "calls.jsonl"
    script.write_text(json.dumps([{"text": "ok"}]))
    r = run(["chat", "--workspace", str(ws), "--model", f"scripted:{script}", "hi"], home,
            tmp_path, OPENPROGRAM_SCRIPTED_LOG=str(log))
    assert r.returncode == 0, r.stderr
    (call,) = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert call["system"].count("No language-server diagnostics reach you here") == 1
    assert call["system"].count("There is no definition, references or symbol lookup") == 1
    assert not [t for t in call["tools"] if t.startswith("lsp_")]


def test_thoughts_go_to_stderr_and_a_cut_reply_says_so(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"thought": "Plan: a long\nanswer.", "text": "Here is the sta",
                                   "stop": "max_tokens"}]))
    r = run(["chat", "--workspace", str(ws), "--model", f"scripted:{script}", "explain"], home,
            tmp_path)
    assert r.returncode == 1
    assert r.stdout.strip() == "Here is the sta"  # the thought is never the reply
    assert "✻ Plan: a long\n  answer." in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("openprogram-lsp: error: the reply was cut: the model reached its "
                           "output limit")


def test_bad_input_gets_a_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    r = run(["chat", "--permission-mode", "yolo", "hi"], home, tmp_path)
    assert r.returncode == 2 and "unknown permission mode" in r.stderr
    r = run(["chat", "--model", "nope:x", "hi"], home, tmp_path)
    assert r.returncode == 2 and "unknown model" in r.stderr
    assert json.loads(run(["sessions", "--json"], home, tmp_path).stdout) == []  # no junk
    r = run(["history", "snosuch"], home, tmp_path)
    assert r.returncode == 2 and "unknown session" in r.stderr


def test_iteration_cap_from_the_environment(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "list_dir", "arguments": {}}]}] * 3))
    r = run(["chat", "--workspace", str(ws), "--model", f"scripted:{script}", "spin"], home,
            tmp_path, OPENPROGRAM_MAX_ITERATIONS="2")
    assert r.returncode == 0 and "limit of 2 model calls" in r.stdout
    r = run(["chat", "--workspace", str(ws), "hi"], home, tmp_path,
            OPENPROGRAM_MAX_ITERATIONS="many")
    assert r.returncode == 2 and "OPENPROGRAM_MAX_ITERATIONS" in r.stderr


def test_rules_lists_and_revokes(tmp_path: Path) -> None:
    from openprogram_lsp.approvals.rulebook import RuleBook
    from openprogram_lsp.approvals.rules import Rule

    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    rule = RuleBook.for_workspace(home, ws).add(Rule(
        id="", decision="allow", kind="command", tool="run_command", value="make test",
        description="Run `make test`"))
    listed = run(["rules", "--workspace", str(ws), "--json"], home, tmp_path)
    assert listed.returncode == 0, listed.stderr
    [shown] = json.loads(listed.stdout)
    assert shown["id"] == rule.id and shown["value"] == "make test"
    assert run(["rules", "--workspace", str(ws), "--revoke", rule.id], home,
               tmp_path).returncode == 0
    assert "no rules" in run(["rules", "--workspace", str(ws)], home, tmp_path).stdout
    missing = run(["rules", "--workspace", str(ws), "--revoke", "nope"], home, tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.startswith("openprogram-lsp: error: no rule 'nope'")
    assert len(missing.stderr.strip().splitlines()) == 1
