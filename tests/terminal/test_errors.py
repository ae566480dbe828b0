"""User errors are one line on stderr with a non-zero exit, and leave nothing behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.terminal.cli import cli_env, one_error_line, run, sessions


def test_a_missing_workspace_is_refused_before_anything_runs(tmp_path: Path) -> None:
    r = run(["chat", "--workspace", str(tmp_path / "project"), "list src"], tmp_path)
    assert r.returncode == 2
    assert "workspace" in one_error_line(r) and "does not exist" in r.stderr
    assert sessions(tmp_path) == []
    (tmp_path / "file").write_text("x")
    r = run(["chat", "--workspace", str(tmp_path / "file"), "hi"], tmp_path)
    assert "is not a directory" in one_error_line(r)


def test_bad_arguments_are_one_line_with_a_hint(tmp_path: Path) -> None:
    line = one_error_line(run(["chat", "--bogus", "x"], tmp_path))
    assert "unrecognized arguments: --bogus" in line and "--help" in line
    assert "invalid choice" in one_error_line(run(["nosuch"], tmp_path))
    assert "needs a message" in one_error_line(run(["chat"], tmp_path))
    line = one_error_line(run(["chat", "--compact"], tmp_path))
    assert "--compact needs --session" in line
    assert sessions(tmp_path) == []  # no junk sessions from refused requests


def test_an_unwritable_home_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    line = one_error_line(run(["sessions", "--home", str(blocker / "state")], tmp_path))
    assert "cannot use" in line and "Not a directory" in line and "--home" in line


def test_git_missing_from_path_is_one_line(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"  # a PATH with python but without git
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    (tmp_path / "ws").mkdir()
    r = run(["chat", "--workspace", str(tmp_path / "ws"), "hi"], tmp_path, PATH=str(bindir))
    assert "git was not found on PATH" in one_error_line(r)


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    for args in (["schema"], ["config"]):
        proc = subprocess.Popen([sys.executable, "-m", "openprogram_lsp", *args],
                                env=cli_env(tmp_path), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, bufsize=0)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(5)
        proc.stdout.close()  # like `| head -c5`
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0
        assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "f"
    blocker.write_text("")
    r = run(["--debug", "sessions", "--home", str(blocker / "x")], tmp_path)
    assert r.returncode != 0 and "Traceback" in r.stderr


def test_every_subcommand_has_help(tmp_path: Path) -> None:
    top = run(["--help"], tmp_path)
    assert top.returncode == 0
    for cmd in ("serve", "acp", "chat", "sessions", "history", "checkpoints", "diff",
                "restore", "undo", "schema", "config", "branches", "checkout", "branch-diff"):
        assert cmd in top.stdout
        r = run([cmd, "--help"], tmp_path)
        assert r.returncode == 0
        lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
        assert len(lines) >= 3, (cmd, r.stdout)  # usage, a description, options
        for option in ("--workspace", "--json", "--session", "--model"):
            if option in r.stdout:
                after = r.stdout.split(option, 1)[1].split("\n", 1)[0]
                described = after.strip() or r.stdout.split(option, 1)[1].split("\n")[1]
                assert described.strip(), (cmd, option)


def test_no_arguments_on_a_terminal_explains_instead_of_serving(tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "openprogram_lsp"], env=cli_env(tmp_path),
                              stdin=slave, capture_output=True, text=True, timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 2
    assert "editors run for you" in proc.stderr and "chat" in proc.stderr
    assert shutil.which("git")  # the environment the rest of the suite assumes


def test_model_errors_before_the_first_call_leave_no_session(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    for spec, said in ((f"scripted:{tmp_path / 'missing.json'}", "no such file"),
                       (f"scripted:{bad}", "is not valid JSON"),
                       ("openai:gpt-4o", "OPENAI_API_KEY is not set")):
        r = run(["chat", "--workspace", str(ws), "--model", spec, "hi"], tmp_path,
                OPENAI_API_KEY="", OPENAI_BASE_URL="")
        assert said in one_error_line(r)
    assert sessions(tmp_path) == []
