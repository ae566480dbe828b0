"""Start ``openprogram-lsp`` processes for the tests by forking one that has already imported it.

Every test server, CLI run and ACP agent used to pay the interpreter's start and the imports
(pydantic models, lsprotocol's attrs classes, ...): about 1.5 s of CPU a server, most of the
suite's CPU time. One fork server per test worker imports the command once; each start forks
it. The child is still a separate real process: it gets the caller's stdin, stdout and stderr
(pipes or a pty, passed over a unix socket), argv, environment and cwd, runs
``openprogram_lsp.launch.main()`` and exits through the normal interpreter shutdown (atexit,
non-daemon threads). Its pid is the real server's, so ``kill`` and ``/proc`` checks see it.

Editors and ACP clients exec their server command themselves: ``launcher()`` gives them an
``openprogram-lsp`` that forks it too (tests/forkclient.py). What a fork cannot show, process
start itself, stays covered by tests that run the installed command (a checkhealth, a killed
server and the README in Neovim, one acpx run, tests/test_import_effects.py, the terminal and
pipe tests). ``OPLSP_TESTS_EXEC=1`` makes every start a real exec again.

Run as a script, this file is the fork server; imported, it is the client side.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

EXEC_ENV = "OPLSP_TESTS_EXEC"
CARRIED = (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1,
           signal.SIGUSR2)
"""Signals whose ignored state a child takes from the caller, as an exec'd one inherits it
(a suite started in the background runs with SIGINT ignored, and so would its servers)."""
MODULES = ("openprogram_lsp", "openprogram_lsp.cli")
"""``python -m`` targets the fork server answers (both end in ``launch.main``/``cli.main``)."""
LAUNCHER = "openprogram-lsp"
"""The fork client's name for the command (``openprogram_lsp.launch.main``)."""
SCRIPT = "python-script"
"""The fork client's name for ``python SCRIPT ARGS...``: the tests' MCP server, whose SDK the
fork server imports on the first such start."""
SCRIPT_IMPORTS = ("mcp.server.mcpserver", "mcp.types")
PRELOAD = ("openprogram_lsp.acp.server", "openprogram_lsp.app", "openprogram_lsp.cli",
           "openprogram_lsp.launch", "openprogram_lsp.lsp.serve",
           # what every server imports on its first steps: watchfiles' anyio backend, the
           # progress reports, the HTTP settings section
           "anyio._backends._asyncio", "anyio.to_thread", "pygls.progress",
           "openprogram_lsp.config.sections.http")


def _readable(objs: list[Any], timeout: float | None) -> list[Any]:
    """Which of ``objs`` (descriptors or objects with ``fileno``) can be read, waiting at most
    ``timeout`` seconds; epoll where there is one, so a test worker holding over 1,024 open
    descriptors does not fail as ``select`` does ("filedescriptor out of range")."""
    with selectors.DefaultSelector() as sel:
        for obj in objs:
            sel.register(obj, selectors.EVENT_READ)
        return [key.fileobj for key, _ in sel.select(timeout)]


# -- the fork server (a separate process) ------------------------------------------------------

def _serve(path: str) -> None:
    import gc
    import importlib

    for name in PRELOAD:  # imported once, shared by every child
        importlib.import_module(name)
    from lsprotocol.converters import get_converter

    get_converter()  # resolves the forward references of every LSP type: ~0.1-0.3 s a server
    gc.collect()
    gc.freeze()  # the children's collections skip what the fork server imported
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)
    while True:
        ready = _readable([listener, 0, *children], None)
        if 0 in ready and not os.read(0, 1):  # the test worker is done (or gone)
            _reap(children, 20.0)  # their stdin closes with the worker's: they end
            _remove(path)  # also when the worker died without closing
            return
        for pidfd in [fd for fd in ready if fd in children]:
            pid, conn = children.pop(pidfd)
            _, status = os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
            conn.close()
            os.close(pidfd)
        if listener in ready:
            conn, _ = listener.accept()
            try:
                started = _start(conn, listener, children)
            except (OSError, ValueError):  # a client gone or garbled: it alone is dropped
                conn.close()
                continue
            children[started[0]] = (started[1], conn)


def _start(conn: socket.socket, listener: socket.socket,
           children: dict[int, tuple[int, socket.socket]]) -> tuple[int, int]:
    """Fork the child a client asks for; (its pidfd, its pid). A client that went away after
    the fork gets no answer, and its child is still reaped (its stdio ends with the client's)."""
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    try:
        request = json.loads(data)
        if request.get("program") == SCRIPT and SCRIPT_IMPORTS[0] not in sys.modules:
            import gc
            import importlib

            for name in SCRIPT_IMPORTS:  # once, shared by every forked script
                importlib.import_module(name)
            gc.collect()
            gc.freeze()
        set_up, done = os.pipe()
        pid = os.fork()
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    if pid == 0:
        listener.close()
        for fd, (_, other) in children.items():
            os.close(fd)
            other.close()
        conn.close()
        os.close(set_up)
        _child(request, fds, done)  # never returns
    for fd in fds:
        os.close(fd)
    os.close(done)
    os.read(set_up, 1)  # as an exec'd process, the child has its stdio, cwd and env
    os.close(set_up)
    pidfd = os.pidfd_open(pid)
    with contextlib.suppress(OSError):
        conn.sendall(f"pid {pid}\n".encode())
    return pidfd, pid


def _remove(path: str) -> None:
    """The socket, the launcher beside it and their directory."""
    import shutil

    shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def _reap(children: dict[int, tuple[int, socket.socket]], timeout: float) -> None:
    """Wait (bounded) for the children still running, so that their CPU time is counted."""
    import time

    deadline = time.monotonic() + timeout
    while children and (left := deadline - time.monotonic()) > 0:
        ready = _readable(list(children), left)
        for pidfd in ready:
            pid, conn = children.pop(pidfd)
            os.waitpid(pid, 0)
            conn.close()
            os.close(pidfd)


def _child(request: dict[str, Any], fds: list[int], done: int) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    # as ``python -m`` puts its cwd first, a script its own directory
    sys.path[0] = request.get("path0", request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _dispositions(set(request.get("ignored", ())))
    os.close(done)
    if request.get("program") == SCRIPT:  # ``python SCRIPT ARGS...``
        import runpy

        sys.argv = list(request["args"])
        sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
        runpy.run_path(sys.argv[0], run_name="__main__")
        raise SystemExit(0)
    sys.argv = [request["argv0"], *request["args"]]
    from openprogram_lsp.launch import main

    raise SystemExit(main())  # the interpreter's own exit: atexit, thread joins, flushes


def _dispositions(ignored: set[int]) -> None:
    """The caller's ignored signals stay ignored; the others are what a new interpreter has
    (Python's KeyboardInterrupt handler for SIGINT, the default for the rest)."""
    for sig in CARRIED:
        if sig in ignored:
            signal.signal(sig, signal.SIG_IGN)
        else:
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT
                          else signal.SIG_DFL)


def ignored_signals() -> list[int]:
    """Which of ``CARRIED`` this process ignores (sent with each start)."""
    return [int(sig) for sig in CARRIED if signal.getsignal(sig) == signal.SIG_IGN]


# -- the client side (the test worker) ---------------------------------------------------------

class _ForkServer:
    """This worker's fork server, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self.path = ""

    def ensure(self) -> str:
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return self.path
            self.path = str(Path(tempfile.mkdtemp(prefix="op-fork-")) / "s")
            env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
            self._proc = subprocess.Popen([sys.executable, __file__, self.path],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          env=env)
            assert self._proc.stdout is not None
            ready = _readable([self._proc.stdout], 120)
            line = self._proc.stdout.readline() if ready else b""
            if line != b"ready\n":
                self._proc.kill()
                raise RuntimeError(f"the test fork server did not start ({line!r})")
            atexit.register(self.close)
            return self.path

    def close(self) -> None:
        """End the fork server (its stdin closes) and reap it; its children end on their own."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
        _remove(self.path)


_SERVER = _ForkServer()


def launcher(program: str = LAUNCHER) -> str | None:
    """An executable ``openprogram-lsp`` that forks this worker's server (tests/forkclient.py),
    for the editors and ACP clients that start the command themselves (or, ``SCRIPT``, one that
    stands in for ``python``, for the MCP servers the command starts); None when
    ``OPLSP_TESTS_EXEC`` asks for real execs (or off Linux)."""
    if os.environ.get(EXEC_ENV) or sys.platform != "linux":
        return None
    assert program in (LAUNCHER, SCRIPT), program
    exe = Path(_SERVER.ensure()).parent / "bin" / program
    if not exe.exists():
        source = Path(__file__).with_name("forkclient.py").read_text("utf-8")
        exe.parent.mkdir(exist_ok=True)
        part = exe.with_name(f".{program}.{os.getpid()}")
        part.write_text(f"#!{sys.executable} -IS\n{source}", "utf-8")
        part.chmod(0o755)
        part.replace(exe)  # whole or absent, for a start that races this one
    return str(exe)


def forkable(command: Sequence[str]) -> list[str] | None:
    """The arguments after ``python -m openprogram_lsp[.cli]``, or None to really exec it."""
    if os.environ.get(EXEC_ENV) or len(command) < 3 or sys.platform != "linux":
        return None
    if command[0] != sys.executable or command[1] != "-m" or command[2] not in MODULES:
        return None
    return list(command[3:])


def _spawn(args: list[str], fds: tuple[int, int, int], env: dict[str, str] | None,
           cwd: str | os.PathLike[str] | None) -> tuple[int, socket.socket]:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(_SERVER.ensure())
    request = {"args": args, "argv0": sys.executable, "env": dict(os.environ if env is None
                                                                   else env),
               "cwd": os.fspath(cwd if cwd is not None else os.getcwd()),
               "ignored": ignored_signals()}
    socket.send_fds(conn, [json.dumps(request).encode()], list(fds))
    line = b""
    while not line.endswith(b"\n"):  # byte by byte: the exit line follows on this socket
        byte = conn.recv(1)
        if not byte:
            break
        line += byte
    if not line.startswith(b"pid "):
        conn.close()
        raise RuntimeError(f"the test fork server refused a start ({line!r})")
    return int(line.split()[1]), conn


def _exit_code(line: bytes) -> int:
    if not line.startswith(b"exit "):
        raise RuntimeError(f"the test fork server lost a child ({line!r})")
    return int(line.split()[1])


class ForkedProcess:
    """The asyncio ``Process`` surface pygls and pytest-lsp use, for a forked server."""

    def __init__(self, pid: int, conn: socket.socket, stdin: asyncio.StreamWriter | None,
                 stdout: asyncio.StreamReader | None,
                 stderr: asyncio.StreamReader | None) -> None:
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        self.returncode: int | None = None
        self._exited = asyncio.ensure_future(self._watch(conn))

    async def _watch(self, conn: socket.socket) -> None:
        conn.setblocking(False)
        reader, writer = await asyncio.open_unix_connection(sock=conn)
        try:
            self.returncode = _exit_code(await reader.readline())
        finally:
            writer.close()

    async def wait(self) -> int:
        await asyncio.shield(self._exited)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


async def start_async(args: list[str], env: dict[str, str] | None = None,
                      cwd: str | None = None, *, stdin: int = subprocess.PIPE,
                      stdout: int = subprocess.PIPE) -> ForkedProcess:
    """A forked ``openprogram-lsp ARGS`` (like ``create_subprocess_exec``): stderr is piped,
    stdin and stdout are piped or ``subprocess.DEVNULL``."""
    loop = asyncio.get_running_loop()
    mine: list[int] = []  # our ends of the pipes
    theirs: list[int] = []  # the child's ends (closed here once it has them)
    for mode, child_reads in ((stdin, True), (stdout, False), (subprocess.PIPE, False)):
        if mode == subprocess.DEVNULL:
            theirs.append(os.open(os.devnull, os.O_RDONLY if child_reads else os.O_WRONLY))
            mine.append(-1)
            continue
        r, w = os.pipe()
        mine.append(w if child_reads else r)
        theirs.append(r if child_reads else w)
    try:
        pid, conn = _spawn(args, (theirs[0], theirs[1], theirs[2]), env, cwd)
    finally:
        for fd in theirs:
            os.close(fd)
    readers: list[asyncio.StreamReader | None] = []
    for fd in mine[1:]:
        if fd < 0:
            readers.append(None)
            continue
        reader = asyncio.StreamReader(limit=1 << 26)
        await loop.connect_read_pipe(lambda r=reader: asyncio.StreamReaderProtocol(r),
                                     os.fdopen(fd, "rb", 0))
        readers.append(reader)
    writer = None
    if mine[0] >= 0:
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(), os.fdopen(mine[0], "wb", 0))
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return ForkedProcess(pid, conn, writer, readers[0], readers[1])


async def start_on(args: list[str], fds: tuple[int, int, int], env: dict[str, str] | None = None,
                   cwd: str | os.PathLike[str] | None = None) -> ForkedProcess:
    """A forked ``openprogram-lsp ARGS`` on the caller's own descriptors (stdin, stdout,
    stderr: a socket, a file), which it shares as an exec'd child would."""
    pid, conn = _spawn(args, fds, env, cwd)
    return ForkedProcess(pid, conn, None, None, None)


def run_command(command: list[str], *, env: dict[str, str] | None = None,
                cwd: str | os.PathLike[str] | None = None, stdin: int | IO[Any] | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(command, capture_output=True, text=True, ...)``, forked when the
    command is ``python -m openprogram_lsp ...``."""
    args = forkable(command)
    if args is None:
        return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout,
                              stdin=subprocess.DEVNULL if stdin is None else stdin)
    return run(args, env=env, cwd=cwd, stdin=stdin, timeout=timeout)


def run(args: list[str], *, env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None, stdin: int | IO[Any] | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([python, -m, openprogram_lsp, *args], capture_output=True, text=True)``
    through the fork server; ``stdin`` is DEVNULL (default), a file descriptor or a file."""
    opened: list[int] = []
    if stdin is None or stdin == subprocess.DEVNULL:
        in_fd = os.open(os.devnull, os.O_RDONLY)
        opened.append(in_fd)
    else:
        in_fd = stdin if isinstance(stdin, int) else stdin.fileno()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid, conn = _spawn(args, (in_fd, out_w, err_w), env, cwd)
    finally:
        for fd in (*opened, out_w, err_w):
            os.close(fd)
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    open_fds = [out_r, err_r, conn.fileno()]
    status: bytes = b""
    deadline = _now() + timeout
    try:
        while out_r in open_fds or err_r in open_fds or conn.fileno() in open_fds:
            left = deadline - _now()
            ready = _readable(open_fds, max(left, 0))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired([sys.executable, "-m", "openprogram_lsp",
                                                 *args], timeout)
            for fd in ready:
                data = os.read(fd, 1 << 16)
                if fd == conn.fileno():
                    status += data
                    if not data or status.endswith(b"\n"):
                        open_fds.remove(fd)
                elif data:
                    chunks[fd].append(data)
                else:
                    open_fds.remove(fd)
    finally:
        os.close(out_r)
        os.close(err_r)
        conn.close()
    return subprocess.CompletedProcess(
        [sys.executable, "-m", "openprogram_lsp", *args], _exit_code(status),
        _text(b"".join(chunks[out_r])), _text(b"".join(chunks[err_r])))


def _text(data: bytes) -> str:
    """Decoded as ``subprocess.run(text=True)`` does (locale encoding, universal newlines)."""
    import locale

    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _now() -> float:
    import time

    return time.monotonic()


if __name__ == "__main__":
    sys.path[0] = os.getcwd()  # not tests/ (its acp/ would hide the ACP SDK), as with -m
    _serve(sys.argv[1])
