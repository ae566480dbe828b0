"""The evaluation harness end to end: the CLI runs every built-in task through the real
dispatcher, sandbox and approvals with each task's scripted solution (all solved), a wrong
solution (reported unsolved), a real provider against a loopback OpenAI-compatible server, and
one-line errors; the hidden files never follow a link the agent left."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.providers.loopback import LoopbackServer, Reply
from tests.providers.wire import Call, OpenAIStream, fragments

from openprogram_lsp.cli import main
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.evals.check import lay_hidden
from openprogram_lsp.evals.tasks import TASKS_DIR, load_task, load_tasks

TOOLS_TODAY = {"read_file", "write_file", "edit_file", "run_command", "grep"}


def run_eval(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = main(["eval", "--json", "-", *args])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc: dict[str, Any] = json.loads(out.out)
    return doc


def test_every_task_is_solved_by_its_scripted_solution(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    tasks = load_tasks()
    assert len(tasks) >= 10 and len({t.kind for t in tasks}) >= 7
    for t in tasks:  # written against the tools every build has
        script = json.loads((t.folder / "solution.json").read_text())
        names = {c["name"] for step in script for c in step.get("tool_calls", [])}
        assert names and names <= TOOLS_TODAY, (t.id, names)
    doc = run_eval(capsys, "--model", "scripted", "--jobs", "4")
    by_id = {r["id"]: r for r in doc["tasks"]}
    assert sorted(by_id) == [t.id for t in tasks]
    for r in doc["tasks"]:
        assert r["solved"], (r["id"], r["status"], r["error"], r["check_output"])
        assert r["status"] == "done" and r["model_calls"] >= 2 and r["tool_calls"] >= 2
        assert r["input_tokens"] > 0 and r["output_tokens"] > 0 and r["seconds"] > 0
        assert r["check_exit_code"] == 0
    s = doc["summary"]
    assert s["tasks"] == s["solved"] == len(tasks) and s["solve_rate"] == 1.0
    assert s["model_calls"] == sum(r["model_calls"] for r in doc["tasks"])
    assert doc["model"] == "scripted" and doc["permission_mode"] == "bypass"


def test_a_wrong_solution_is_reported_unsolved(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--model", "scripted", "--solution", "wrong"])
    out = capsys.readouterr().out
    assert code == 0
    assert "fix_failing_test       FAILED" in out, out
    assert "solved 0/1 (0%)" in out and "skipped" in out
    doc = run_eval(capsys, "--model", "scripted", "--solution", "wrong",
                   "--task", "fix_failing_test")
    [r] = doc["tasks"]
    # it edited the visible test; the check runs the task's own copy, which still fails
    assert r["status"] == "done" and not r["solved"] and r["check_exit_code"] != 0
    assert r["tools"] == {"edit_file": 1} and "FAILED" in r["check_output"]


def test_accept_edits_asks_for_commands_and_the_harness_approves_them(
        capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_eval(capsys, "--model", "scripted", "--permission-mode", "accept-edits",
                   "--task", "stack_trace", "--task", "edit_config", "--keep")
    stack, config = doc["tasks"]
    assert stack["solved"] and stack["approvals"] == 1  # its one run_command
    assert config["solved"] and config["approvals"] == 0  # edits only: accepted by the mode
    kept = [Path(r["workspace"]) for r in (stack, config)]
    try:
        assert (kept[0] / "workspace" / "inventory.py").read_text().count(
            "STOCK.get(name, 0)") == 2
        assert all((k / "home").is_dir() for k in kept)
    finally:
        for k in kept:
            shutil.rmtree(k, ignore_errors=True)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    srv = LoopbackServer().start()
    try:
        yield srv
    finally:
        srv.stop()


def test_a_real_provider_runs_a_task_and_its_usage_is_reported(
        server: LoopbackServer, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-eval-test")
    edit = Call("call_1", "edit_file", fragments(
        {"path": "config/app.toml", "old_text": "max_connections = 10\n",
         "new_text": "max_connections = 50\ntimeout_seconds = 30\n"}, 20))
    debug = Call("call_2", "edit_file", fragments(
        {"path": "config/app.toml", "old_text": "debug = true", "new_text": "debug = false"},
        20))
    server.queue(Reply(chunks=OpenAIStream(text=["Editing."], calls=[edit, debug]).events()),
                 Reply(chunks=OpenAIStream(text=["Done."]).events()))
    doc = run_eval(capsys, "--model", "openai:gpt-test", "--task", "edit_config")
    [r] = doc["tasks"]
    assert r["solved"] and r["model_calls"] == 2 and r["tool_calls"] == 2
    # the loopback stream's usage: 120 prompt (64 cached) and 15 completion tokens a call
    assert (r["input_tokens"], r["output_tokens"], r["cache_read_tokens"]) == (240, 30, 128)
    first = server.received[0].json
    assert first["messages"][-1]["content"].startswith("In config/app.toml")
    assert {t["function"]["name"] for t in first["tools"]} >= TOOLS_TODAY


@pytest.mark.parametrize(("args", "message"), [
    (["--task", "nope"], "no task 'nope'"),
    (["--tasks-dir", "/nonexistent/tasks"], "no task folder"),
    (["--permission-mode", "ask"], "invalid choice: 'ask'"),
    (["--timeout", "0"], "--timeout must be more than 0"),
    (["--model", "openai:gpt-test"], "OPENAI_API_KEY"),
    (["--model", "bogus:x"], "unknown model 'bogus:x'"),
])
def test_errors_are_one_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    try:
        code = main(["eval", *args])
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code != 0 and message in err, err
    assert len(err.strip().splitlines()) <= 2, err  # the error, and at most a hint


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(load_tasks()) and out[0].startswith("add_function")


def test_task_files_are_checked(tmp_path: Path) -> None:
    bad = tmp_path / "t1"
    (bad / "repo").mkdir(parents=True)
    (bad / "task.toml").write_text('title = "x"\nkind = "k"\nprompt = "p"\n')
    with pytest.raises(ConfigError, match="'check' must be a non-empty string"):
        load_task(bad)
    (bad / "task.toml").write_text('title = "x"\nkind = "k"\nprompt = "p"\ncheck = "c"\n'
                                   'tiemout = 3\n')
    with pytest.raises(ConfigError, match="unknown key"):
        load_task(bad)
    (bad / "task.toml").write_text('title = "x"\nkind = "k"\nprompt = "p"\ncheck = "c"\n'
                                   'timeout = -1\n')
    with pytest.raises(ConfigError, match="'timeout'"):
        load_task(bad)
    (bad / "task.toml").write_text("title = \n")
    with pytest.raises(ConfigError, match=r"task\.toml"):
        load_task(bad)
    assert load_task(TASKS_DIR / "edit_config").check.startswith("{python}")


def test_hidden_files_never_follow_a_link_left_in_the_workspace(tmp_path: Path) -> None:
    hidden, ws, outside = tmp_path / "hidden", tmp_path / "ws", tmp_path / "outside"
    (hidden / "tests").mkdir(parents=True)
    (hidden / "check.py").write_text("CHECK = 1\n")
    (hidden / "tests" / "test_x.py").write_text("X = 1\n")
    ws.mkdir()
    outside.mkdir()
    (outside / "victim.py").write_text("precious\n")
    os.symlink(outside / "victim.py", ws / "check.py")  # the agent's links
    os.symlink(outside, ws / "tests")
    assert sorted(lay_hidden(hidden, ws)) == ["check.py", os.path.join("tests", "test_x.py")]
    assert (outside / "victim.py").read_text() == "precious\n"
    assert sorted(p.name for p in outside.iterdir()) == ["victim.py"]
    assert not (ws / "check.py").is_symlink() and (ws / "check.py").read_text() == "CHECK = 1\n"
    assert not (ws / "tests").is_symlink() and (ws / "tests" / "test_x.py").is_file()


def test_python_m_entry_point(tmp_path: Path) -> None:
    import subprocess

    out = subprocess.run([sys.executable, "-m", "openprogram_lsp", "eval", "--list"],
                         capture_output=True, text=True, timeout=60, check=False,
                         env={**os.environ, "OPENPROGRAM_HOME": str(tmp_path / "h")})
    assert out.returncode == 0 and "fix_failing_test" in out.stdout, out.stderr


async def test_the_check_finds_an_interpreter_the_sandbox_keeps_private(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout under /tmp: its .venv is in the directory every box gets empty, so the
    check's ``{python}`` was "not found" and every task unsolved. The check's box binds this
    interpreter's prefix read-only (only what a private directory hides)."""
    import tempfile

    from openprogram_lsp.config import load_settings
    from openprogram_lsp.evals.check import run_check

    prefix = Path(tempfile.mkdtemp(prefix="op-venv-", dir="/tmp"))
    try:
        (prefix / "bin").mkdir()
        python = prefix / "bin" / "python"
        python.symlink_to(os.path.realpath(sys.executable))  # as a venv's python is
        monkeypatch.setattr(sys, "executable", str(python))
        monkeypatch.setattr(sys, "prefix", str(prefix))
        ws = tmp_path / "ws"
        ws.mkdir()
        settings = load_settings(env={}, user_file=False)
        got = await run_check("{python} -c \"print('ran')\" && touch " + f"{prefix}/x",
                              ws, settings, 60)
        assert got.sandboxed and "ran" in got.output, got.output
        assert got.exit_code != 0 and "Read-only file system" in got.output  # read-only
        assert not (prefix / "x").exists()
    finally:
        shutil.rmtree(prefix)
