"""Running hook commands: stdin, environment, timeouts, cancel, hostile output."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from openprogram_lsp.hooks.config import HookSpec
from openprogram_lsp.hooks.runner import MAX_CAPTURE, run_hook


def hook(command: str, timeout: float = 10.0) -> HookSpec:
    return HookSpec("PreToolUse", command, timeout=timeout)


def test_the_event_arrives_on_stdin_in_the_workspace(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    run = run_hook(hook('cat; echo; pwd; echo "$CLAUDE_PROJECT_DIR"; echo "k=$OPENAI_API_KEY"'),
                   {"tool_name": "Bash"}, tmp_path)
    lines = run.stdout.splitlines()
    assert json.loads(lines[0]) == {"tool_name": "Bash"}
    assert lines[1:] == [str(tmp_path), str(tmp_path), "k="]
    assert run.exit_code == 0 and not run.failed


def test_a_hook_that_ignores_stdin_and_floods_stdout_is_bounded(tmp_path: Path) -> None:
    run = run_hook(hook("head -c 2000000 /dev/zero | tr '\\0' x; exit 1"), {"big": "y" * 500_000},
                   tmp_path)
    assert run.exit_code == 1 and run.failed
    assert len(run.stdout) == MAX_CAPTURE


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie still answers kill(0); its state says it is dead
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.02)
    return False


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    run = run_hook(hook(f"sleep 30 & echo $! > {pidfile}; wait", timeout=0.5), {}, tmp_path)
    assert run.timed_out and run.exit_code is None and run.failed
    assert time.monotonic() - started < 3
    assert _gone(int(pidfile.read_text()))  # the background child was in the group


def test_cancel_stops_a_running_hook(tmp_path: Path) -> None:
    flag = threading.Event()
    threading.Timer(0.2, flag.set).start()
    started = time.monotonic()
    run = run_hook(hook("sleep 5"), {}, tmp_path, cancelled=flag.is_set)
    assert run.cancelled and time.monotonic() - started < 2


def test_a_missing_workspace_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    run = run_hook(hook("true"), {}, tmp_path / "gone")
    assert run.error and run.failed
