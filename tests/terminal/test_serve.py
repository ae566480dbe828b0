"""``serve`` failures and Ctrl-C are one line, never a traceback."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.terminal.cli import cli_env, one_error_line, run


def test_a_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = one_error_line(run(["serve", "--tcp", str(port)], tmp_path))
    assert "already in use" in line and "--tcp PORT" in line


def test_ctrl_c_stops_a_tcp_server_quietly(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "openprogram_lsp", "serve", "--tcp",
                             str(port)], env=cli_env(tmp_path), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:  # until it accepts connections
            assert proc.poll() is None and time.monotonic() < deadline
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
        assert proc.stderr is not None
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert "Traceback" not in err and "interrupted" in err
