"""Ctrl-C at an approval or question prompt ends the command at once, without a traceback."""

from __future__ import annotations

import ctypes
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.terminal.cli import cli_env, run


def _wait_for(proc: subprocess.Popen[bytes], needle: bytes, timeout: float = 30) -> bytes:
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {needle!r} in {seen!r}"
        ready, _, _ = select.select([proc.stderr], [], [], left)
        if ready:
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, f"stderr closed before {needle!r}: {seen!r}"
            seen += chunk
    return seen


_TGKILL = {"x86_64": 234, "aarch64": 131}


def _ctrl_c_as_at_a_terminal() -> None:
    """A foreground command at a terminal gets SIGINT; one started from a suite run in the
    background (a non-interactive shell's ``&``) would inherit it ignored, and rightly ignore
    the test's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _sigint_to_a_thread_other_than_main(pid: int) -> None:
    """SIGINT sent to one of the command's other threads (the kernel may pick any thread for a
    process-wide signal; under load it often does), through tgkill(2)."""
    others = [int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid]
    assert others, "the command runs no thread besides its main one"
    number = _TGKILL.get(os.uname().machine)
    assert number is not None, f"no tgkill number known for {os.uname().machine}"
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.syscall(number, pid, others[0], signal.SIGINT) == 0, ctypes.get_errno()


@pytest.mark.parametrize("to_thread", [False, True], ids=["to-process", "to-another-thread"])
@pytest.mark.parametrize("message, prompt", [("write a.txt\nx", b"[1] Allow once"),
                                             ("ask which colour?", b"which colour?")])
def test_ctrl_c_at_a_prompt_exits(tmp_path: Path, message: str, prompt: bytes,
                                  to_thread: bool) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    master, slave = pty.openpty()  # a terminal on stdin, so the command asks
    try:
        # PYTHONFAULTHANDLER: a command still running after the interrupt is sent SIGABRT, and
        # the failure shows where each of its threads waited
        proc = subprocess.Popen([sys.executable, "-m", "openprogram_lsp", "chat", "--workspace",
                                 str(ws), message],
                                env=cli_env(tmp_path, PYTHONFAULTHANDLER="1"), stdin=slave,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=_ctrl_c_as_at_a_terminal)
        try:
            seen = _wait_for(proc, prompt)
            if b"\n> " not in seen.partition(prompt)[2]:  # its reader thread waits for a line
                _wait_for(proc, b"\n> ")
            if to_thread:
                _sigint_to_a_thread_other_than_main(proc.pid)
            else:
                proc.send_signal(signal.SIGINT)
            assert proc.stderr is not None
            try:
                code = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGABRT)
                proc.wait(timeout=10)
                pytest.fail("still running 20 s after Ctrl-C at the prompt:\n"
                            + proc.stderr.read().decode(errors="replace")[-6000:])
            rest = proc.stderr.read().decode()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    finally:
        os.close(slave)
        os.close(master)
    assert code == 130, rest
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest
    assert not (ws / "a.txt").exists()
    hist = run(["sessions", "--json"], tmp_path)
    assert hist.returncode == 0


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_sigterm_mid_stream_keeps_the_partial_reply(tmp_path: Path, sigint: str) -> None:
    # "ignored": a background job of a non-interactive shell (`chat ... &` in a script, or a
    # test run started so) starts with SIGINT ignored; SIGTERM must still end the turn
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "slow.json"
    words = " ".join(f"word{i}" for i in range(400))
    script.write_text(f'[{{"text": "{words}", "delay": 0.05}}]')
    proc = subprocess.Popen([sys.executable, "-m", "openprogram_lsp", "chat", "--workspace",
                             str(ws), "--model", f"scripted:{script}", "--json", "hi"],
                            env=cli_env(tmp_path), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_ignore_sigint if sigint == "ignored" else None)
    try:
        assert proc.stdout is not None
        for _ in range(200):  # bounded: the first text delta comes within a few lines
            line = proc.stdout.readline()
            assert line, "the command ended before streaming"
            if b'"text.delta"' in line:
                break
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert code == 130, err
    assert b"Traceback" not in err
    listed = run(["sessions", "--json"], tmp_path)
    sid = json.loads(listed.stdout)[0]["id"]
    hist = run(["history", sid, "--json"], tmp_path)
    reply = json.loads(hist.stdout)[-1]
    assert reply["status"] == "cancelled" and reply["text"].startswith("word0")
    assert "word399" not in reply["text"]  # cut where the signal came, what streamed is kept
