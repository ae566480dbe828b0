"""The fork client (tests/forkclient.py) stands in for the installed ``openprogram-lsp``."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests import forkserver

INSTALLED = Path(sys.executable).parent / "openprogram-lsp"
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"processId": None, "rootUri": None, "capabilities": {}}})


@pytest.fixture
def client() -> str:
    exe = forkserver.launcher()
    if exe is None:
        pytest.skip(f"{forkserver.EXEC_ENV} is set: every start is an exec")
    return exe


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")},
            "OPENPROGRAM_HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "x"),
            **extra}


@contextlib.contextmanager
def _serving(client: str, tmp_path: Path, *, stderr: int = subprocess.DEVNULL,
             preexec_fn: Callable[[], None] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """``client serve`` in ``tmp_path`` on pipes; killed (and reaped) if the test leaves it."""
    proc = subprocess.Popen([client, "serve"], env=_env(tmp_path), cwd=tmp_path,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                            preexec_fn=preexec_fn)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def _initialize(proc: subprocess.Popen[bytes]) -> dict[str, object]:
    """Send ``initialize`` on the client's stdin; the answer read from its stdout (bounded)."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"Content-Length: {len(INIT)}\r\n\r\n{INIT}".encode())
    proc.stdin.flush()
    data = b""
    while b"\r\n\r\n" not in data or len(data) < _frame_end(data):
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, f"no answer to initialize: {data!r}"
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        assert chunk, f"the server closed its stdout: {data!r}"
        data += chunk
    answer: dict[str, object] = json.loads(data[data.index(b"\r\n\r\n") + 4:_frame_end(data)])
    return answer


def _frame_end(data: bytes) -> int:
    head, _, _ = data.partition(b"\r\n\r\n")
    length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    return len(head) + 4 + length


def _read_until_eof(stream: int, timeout: float) -> bytes:
    """All of a pipe until every writer closed it (bounded)."""
    data = b""
    while True:
        ready, _, _ = select.select([stream], [], [], timeout)
        assert ready, f"the pipe was still open after {timeout} s"
        chunk = os.read(stream, 1 << 16)
        if not chunk:
            return data
        data += chunk


@pytest.mark.parametrize("args", [["--version"], ["config", "--json"], ["nosuch"]])
def test_the_client_answers_as_the_installed_command(client: str, tmp_path: Path,
                                                     args: list[str]) -> None:
    env = _env(tmp_path, OPENPROGRAM_MAX_ITERATIONS="7")
    forked = subprocess.run([client, *args], env=env, cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL)
    executed = subprocess.run([str(INSTALLED), *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        executed.returncode, executed.stdout, executed.stderr)
    if args[0] == "config":  # the child read the client's environment and cwd
        assert "env OPENPROGRAM_MAX_ITERATIONS" in forked.stdout
        assert f'"workspace": "{tmp_path.resolve()}"' in forked.stdout
    if args[0] == "nosuch":
        assert forked.returncode == 2


def test_the_server_talks_over_the_clients_own_pipes(client: str, tmp_path: Path) -> None:
    with _serving(client, tmp_path, stderr=subprocess.PIPE) as proc:
        answer = _initialize(proc)
        assert answer["id"] == 1 and "capabilities" in answer["result"]  # type: ignore[operator]
        proc.stdin.close()  # the server's stdin is this pipe: it ends with it
        assert proc.wait(30) == 0
        _read_until_eof(proc.stdout.fileno(), 30)  # and its end closed the pipe


def test_a_closed_stdin_is_dev_null_for_the_command(client: str, tmp_path: Path) -> None:
    done = subprocess.run([client, "--version"], env=_env(tmp_path), capture_output=True,
                          text=True, timeout=60, preexec_fn=lambda: os.close(0))
    assert done.returncode == 0 and done.stdout.startswith("openprogram-lsp ")


def _as_at_a_terminal() -> None:
    """A command a shell starts in the foreground has SIGINT and SIGHUP at their defaults, even
    under a suite started in the background or by ``nohup`` (which inherits them ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _ignores(pid: int, sig: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(next(x for x in status.splitlines() if x.startswith("SigIgn:")).split()[1], 16)
    return bool(mask & (1 << (sig - 1)))


@pytest.mark.parametrize("ignore", [True, False])
def test_an_ignored_sigint_stays_ignored_in_the_server_as_across_an_exec(
        client: str, tmp_path: Path, ignore: bool) -> None:
    def dispositions() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN if ignore else signal.SIG_DFL)

    with _serving(client, tmp_path, preexec_fn=dispositions) as proc:
        _initialize(proc)
        server = _child_in(tmp_path)
        assert _ignores(server, signal.SIGINT) is ignore
        assert _ignores(proc.pid, signal.SIGINT) is ignore  # the client forwards none then
        proc.stdin.close()
        assert proc.wait(30) == 0


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, -signal.SIGTERM),
                                          (signal.SIGHUP, -signal.SIGHUP),
                                          (signal.SIGINT, 0)])  # serve ends cleanly on Ctrl-C
def test_signals_reach_the_server_and_its_end_is_the_clients(
        client: str, tmp_path: Path, sig: signal.Signals, status: int) -> None:
    with _serving(client, tmp_path, preexec_fn=_as_at_a_terminal) as proc:
        _initialize(proc)  # running, its signal handlers set
        proc.send_signal(sig)
        # stdin stays open here, so the server ended by the forwarded signal, and so did the
        # client once the fork server told it how the server ended
        assert proc.wait(30) == status
        _read_until_eof(proc.stdout.fileno(), 30)  # no writer left: the server is gone


def test_a_killed_server_kills_its_client(client: str, tmp_path: Path) -> None:
    with _serving(client, tmp_path) as proc:
        server = _child_in(tmp_path)
        os.kill(server, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL


def _child_in(cwd: Path) -> int:
    """The fork server's child whose cwd is ``cwd`` (polled, bounded)."""
    import time

    fork = forkserver._SERVER._proc
    assert fork is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        kids = Path(f"/proc/{fork.pid}/task/{fork.pid}/children").read_text().split()
        for pid in kids:
            try:
                if Path(f"/proc/{pid}/cwd").resolve() == cwd.resolve():
                    return int(pid)
            except OSError:
                continue
        time.sleep(0.02)
    raise AssertionError(f"no forked server in {cwd}")


def test_without_a_fork_server_the_client_says_so(tmp_path: Path) -> None:
    exe = tmp_path / "bin" / "openprogram-lsp"
    exe.parent.mkdir()
    shutil.copy(Path(forkserver.__file__).with_name("forkclient.py"), exe)
    done = subprocess.run([sys.executable, "-IS", str(exe), "serve"], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 69
    [line] = done.stderr.splitlines()
    assert line.startswith(f"openprogram-lsp (test fork client): no fork server at {tmp_path}")
    assert done.stdout == ""


def test_the_script_client_runs_python_scripts(tmp_path: Path) -> None:
    exe = forkserver.launcher(forkserver.SCRIPT)
    if exe is None:
        pytest.skip(f"{forkserver.EXEC_ENV} is set: every start is an exec")
    script = tmp_path / "echo.py"
    script.write_text("import os, sys\nprint(sys.argv, os.getcwd(), os.environ['X'])\n"
                      "print(sys.stdin.read(), file=sys.stderr)\nraise SystemExit(3)\n")
    done = subprocess.run([exe, str(script), "a b"], env={"X": "y"}, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, input="in")
    assert done.returncode == 3
    assert done.stdout == f"{[str(script), 'a b']} {tmp_path} y\n"
    assert done.stderr == "in\n"


def test_a_client_gone_or_garbled_does_not_end_the_fork_server(client: str,
                                                                 tmp_path: Path) -> None:
    import socket

    fork = forkserver._SERVER._proc
    assert fork is not None
    path = forkserver._SERVER.ensure()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as garbled:
        garbled.connect(path)
        garbled.sendall(b"not a request")
    null = os.open(os.devnull, os.O_RDWR)
    try:  # a start whose client leaves before its answer (killed mid-start, say)
        request = {"args": ["--version"], "argv0": sys.executable, "env": _env(tmp_path),
                   "cwd": str(tmp_path), "ignored": []}
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
            gone.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            gone.connect(path)
            socket.send_fds(gone, [json.dumps(request).encode()], [null, null, null])
    finally:
        os.close(null)
    done = subprocess.run([client, "--version"], env=_env(tmp_path), capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and done.stdout.startswith("openprogram-lsp ")
    assert forkserver._SERVER._proc is fork and fork.poll() is None
