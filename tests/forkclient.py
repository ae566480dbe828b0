"""``openprogram-lsp`` for an editor or an ACP client under test: a fork of the worker's server.

Neovim, code-server and acpx start the server command themselves, once per test; an exec of
the installed console script spends 1.1-1.7 s of CPU importing. This script stands in for it:
``tests.forkserver.launcher()`` copies it, behind a ``#!<python> -IS`` line (no site, no project
imports: a few milliseconds), to ``<fork server dir>/bin/openprogram-lsp``. Run, it asks the
fork server beside it (``../s``) to fork ``openprogram_lsp.launch.main()`` with this process's
own stdin, stdout and stderr, argv, environment and cwd; forwards SIGTERM, SIGINT, SIGHUP,
SIGQUIT, SIGUSR1 and SIGUSR2 to that child; and exits with its status (killed by a signal, it
dies by the same signal). The editor talks to the real server over the real pipes; only the pid
it holds is this script's, not the server's. Copied as ``python-script``, it stands in for
``python SCRIPT ARGS...`` instead (the tests' MCP server, started by the server).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2)
EX_UNAVAILABLE = 69
"""Exit status when there is no fork server to ask, or it lost the child (sysexits.h)."""


def _fail(message: str) -> int:
    os.write(2, f"openprogram-lsp (test fork client): {message}\n".encode())
    return EX_UNAVAILABLE


def _line(conn: socket.socket) -> bytes:
    """One line from the fork server, byte by byte (the exit line follows the pid line)."""
    line = b""
    while not line.endswith(b"\n"):
        byte = conn.recv(1)
        if not byte:
            break
        line += byte
    return line


def _stdio() -> list[int]:
    """Descriptors 0-2 to hand over; a closed one is replaced by /dev/null, as exec leaves it."""
    fds = []
    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            fds.append(os.open(os.devnull, mode))
    return fds


def main(path: str) -> int:
    """Run the command through the fork server at ``path``; the child's exit status."""
    pending: list[int] = []  # signals that came before the child's pid
    target: list[int] = []  # the child's pidfd once known

    def forward(sig: int, _frame: object) -> None:
        if not target:
            pending.append(sig)
            return
        with contextlib.suppress(OSError):  # already gone: its exit line is on the way
            signal.pidfd_send_signal(target[0], sig)

    # an ignored signal stays ignored, in the child too, as it would be across an exec
    ignored = [int(sig) for sig in FORWARDED if signal.getsignal(sig) == signal.SIG_IGN]
    for sig in FORWARDED:
        if sig not in ignored:
            signal.signal(sig, forward)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError as exc:
        return _fail(f"no fork server at {path} ({exc.strerror}); the test worker that started "
                     "it has ended")
    request = {"program": os.path.basename(sys.argv[0]), "args": sys.argv[1:],
               "argv0": sys.argv[0], "env": dict(os.environ), "cwd": os.getcwd(),
               "path0": os.path.dirname(os.path.abspath(sys.argv[0])),
               "ignored": ignored}
    try:
        socket.send_fds(conn, [json.dumps(request).encode()], _stdio())
        line = _line(conn)
    except OSError as exc:
        return _fail(f"the fork server at {path} failed ({exc.strerror})")
    if not line.startswith(b"pid "):
        return _fail(f"the fork server refused the start ({line!r})")
    pid = int(line.split()[1])
    with contextlib.suppress(OSError):  # it has exited already: nothing left to signal
        target.append(os.pidfd_open(pid))
    for early in pending:
        forward(early, None)
    line = _line(conn)
    if not line.startswith(b"exit "):
        return _fail(f"the fork server lost the server process {pid} ({line!r})")
    code = int(line.split()[1])
    if code >= 0:
        return code
    for sig in FORWARDED:  # die by the child's signal, as a shell would see an exec'd one die
        signal.signal(sig, signal.SIG_DFL)
    # Python ignores SIGPIPE, for one; SIGKILL and SIGSTOP have no handler to reset
    with contextlib.suppress(OSError, ValueError):
        signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
    return 128 - code  # not reached for a signal whose default is to end the process


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    raise SystemExit(main(os.path.join(os.path.dirname(here), "s")))
