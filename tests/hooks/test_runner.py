"""Running hook commands: stdin, environment, timeouts, cancel, hostile output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from openprogram_lsp.hooks.config import HookSpec
from openprogram_lsp.hooks.runner import MAX_CAPTURE, run_hook
from tests import forkserver, signals


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


def _no_sleep_left(marker: str, within: float = 10.0) -> list[int]:
    """The live ``sleep <marker>`` processes after waiting (bounded) for them to go."""
    deadline = time.monotonic() + within
    while True:
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if cmd[:2] == [b"sleep", marker.encode()] and state != "Z":
                left.append(int(pid))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def test_what_a_hook_leaves_running_ends_when_it_exits(tmp_path: Path) -> None:
    """A background job holding the hook's pipes ends with the hook: the run reports the
    hook's exit at once, not a timeout at its deadline."""
    started = time.monotonic()
    run = run_hook(hook("sleep 41.1 & sleep 41.1 & echo done", timeout=20), {}, tmp_path)
    assert (run.exit_code, run.timed_out, run.stdout) == (0, False, "done\n")
    assert time.monotonic() - started < 10  # not the 20 s deadline
    assert _no_sleep_left("41.1") == []


def test_a_hook_past_its_deadline_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    run = run_hook(hook("setsid sleep 41.2 & sleep 41.2 & echo $$; wait", timeout=0.5), {},
                   tmp_path)
    assert run.timed_out and run.exit_code is None and run.stdout.strip().isdigit()
    assert _gone(int(run.stdout)) and _no_sleep_left("41.2") == []


_SERVER = """
import os, sys
from pathlib import Path
from openprogram_lsp.hooks.config import HookSpec
from openprogram_lsp.hooks.runner import run_hook
print(os.getpid(), flush=True)
run_hook(HookSpec("PreToolUse", sys.argv[1], timeout=60), {}, Path.cwd())
"""


def test_a_hook_dies_with_the_server_killed_by_sigkill(tmp_path: Path) -> None:
    """The death guard reaches the hook's whole group: its shell and its background job."""
    marker, script = tmp_path / "up", tmp_path / "server.py"
    script.write_text(_SERVER)
    # a fork of the worker's fork server (its imports done), printing its real pid
    python = forkserver.launcher(forkserver.SCRIPT) or sys.executable
    server = subprocess.Popen([python, str(script), f"sleep 41.3 & echo $$ > {marker}; wait"],
                              cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        pid = int(server.stdout.readline())
        deadline = time.monotonic() + 30
        while not marker.exists() or not marker.read_text().strip() \
                or not _no_sleep_left("41.3", 0):
            assert time.monotonic() < deadline and server.poll() is None, "the hook never ran"
            time.sleep(0.02)
        shell = int(marker.read_text())
        os.kill(pid, signal.SIGKILL)
        server.wait(10)
        assert _gone(shell, 10) and _no_sleep_left("41.3") == []
    finally:
        server.kill()
        server.wait(10)
        for pid in _no_sleep_left("41.3", 0):  # nothing left on the shared machine
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("how", ["exit", "timeout", "cancel"])
def test_signals_go_only_through_pidfds_or_to_the_group_of_an_unreaped_child(
        how: str, tmp_path: Path) -> None:
    """The rule ``tools/procs.py`` keeps for commands: no signal by number to a pid (it may be
    reaped and reused); a group by number only while its leader, our child, is unreaped."""
    command = "sleep 41.4 & echo" if how == "exit" else "setsid sleep 41.4 & sleep 41.4 & wait"
    stop = threading.Event()
    if how == "cancel":
        threading.Timer(0.3, stop.set).start()
    with signals.recorded() as sent:
        run = run_hook(hook(command, timeout=0.5 if how == "timeout" else 20), {}, tmp_path,
                       cancelled=stop.is_set)
    assert (run.timed_out, run.cancelled) == (how == "timeout", how == "cancel")
    assert sent and signals.only_to_our_groups(sent), sent
    assert _no_sleep_left("41.4") == []
