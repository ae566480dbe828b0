"""``serve --tcp PORT``: several editors on loopback, each proving it knows the server's token.

The token is random per start (or read from ``--token-file``), written with the port and pid
to ``$OPENPROGRAM_HOME/run/<port>.json`` (mode 0600) and printed to stderr. A link that does
not open with ``initialize`` + ``initializationOptions.token`` is refused, and one that speaks
HTTP is closed before anything runs. The server runs until killed or ``--idle-exit`` seconds
without a connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.lsp.connection import Connection
from openprogram_lsp.lsp.framing import DEFAULT_MAX_FRAME, Limits

if TYPE_CHECKING:
    from openprogram_lsp.lsp.host import ServerHost
    from openprogram_lsp.lsp.server import OpenProgramServer

log = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"
MIN_TOKEN = 16


@dataclass(slots=True)
class TcpOptions:
    """What ``serve --tcp`` was started with."""

    port: int
    token_file: Path | None = None
    idle_exit: float | None = None
    keep_turns: float = 0.0  # a turn whose editor went away waits this long for one to re-attach
    max_frame: int = DEFAULT_MAX_FRAME  # the largest frame a link may send (settings)


def read_token(path: Path) -> str:
    """A user-fixed token: the file's first line, private to its owner, 16+ characters."""
    try:
        st = path.stat()
        text = path.read_text("utf-8")
    except OSError as exc:
        raise ConfigError(f"--token-file {path}: {exc.strerror or exc}") from None
    if st.st_mode & 0o077:
        raise ConfigError(f"--token-file {path} is readable by others; chmod 600 it")
    lines = text.strip().splitlines()
    token = lines[0].strip() if lines else ""
    if len(token) < MIN_TOKEN:
        raise ConfigError(f"--token-file {path}: the token must have at least {MIN_TOKEN} "
                          "characters")
    return token


def write_run_file(home: Path, port: int, token: str) -> Path:
    """``<home>/run/<port>.json`` with port, pid and token, readable by the user only."""
    run = home / "run"
    run.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(run, 0o700)
    path = run / f"{port}.json"
    tmp = run / f".{port}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"port": port, "pid": os.getpid(), "host": LOOPBACK, "token": token}, fh)
    os.replace(tmp, path)
    return path


class TcpServer:
    """The listening socket and its links."""

    def __init__(self, host: ServerHost, options: TcpOptions,
                 make_server: Callable[[], OpenProgramServer]) -> None:
        self.host = host
        self.options = options
        self.make_server = make_server
        self.token = (read_token(options.token_file) if options.token_file
                      else secrets.token_urlsafe(32))
        self.limits = Limits(max_frame=options.max_frame, refuse_http=True)
        self.links: set[Connection] = set()
        self.stopping = asyncio.Event()
        self.interrupted = False  # stopped by SIGINT (Ctrl-C): exit 130 like any CLI
        self.port = options.port
        self.run_file: Path | None = None
        self._idle_since = asyncio.get_running_loop().time()
        host.keep_turns = options.keep_turns

    async def on_client(self, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> None:
        """Serve one link until it ends; the server goes on."""
        server = self.make_server()
        server.protocol.set_writer(writer)
        link = Connection(server.protocol, reader, limits=self.limits, token=self.token,
                          close=writer.close)
        server.end_link = lambda _code: link.close("exit")
        self.links.add(link)
        try:
            reason = await link.run()
            log.debug("connection ended: %s", reason)
        except Exception:
            log.exception("connection failed")
        finally:
            self.links.discard(link)
            link.close("ended")
            self.host.detach(server)
            server.protocol.writer = None
            self._idle_since = asyncio.get_running_loop().time()

    async def watch_idle(self) -> None:
        """Stop after ``idle_exit`` seconds without a connection or a running turn (a turn
        waiting for its editor to re-attach keeps the server up)."""
        idle = self.options.idle_exit
        if not idle:
            return
        loop = asyncio.get_running_loop()
        while not self.stopping.is_set():
            await asyncio.sleep(min(1.0, idle / 4))
            if self.host.runner.running:
                self._idle_since = loop.time()
            elif not self.links and loop.time() - self._idle_since >= idle:
                log.info("no connection for %ss; exiting", idle)
                self.stopping.set()

    async def run(self) -> int:
        """Listen until stopped; returns the exit code."""
        loop = asyncio.get_running_loop()
        def stop(sig: signal.Signals) -> None:
            self.interrupted = self.interrupted or sig == signal.SIGINT
            self.stopping.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop, sig)
        listener = await asyncio.start_server(self.on_client, LOOPBACK, self.options.port,
                                              limit=64 * 1024)
        self.port = listener.sockets[0].getsockname()[1]
        home = self.host.dispatcher.services.store.home
        self.run_file = write_run_file(home, self.port, self.token)
        print(f"openprogram-lsp listening on {LOOPBACK}:{self.port}; token {self.token}; "
              f"run file {self.run_file}", file=sys.stderr, flush=True)
        self.host.start()
        idle = asyncio.ensure_future(self.watch_idle())
        try:
            await self.stopping.wait()
        finally:
            idle.cancel()
            listener.close()
            for link in list(self.links):
                link.close("server stopping")
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.host.stop(), 30)
            with contextlib.suppress(FileNotFoundError):
                self.run_file.unlink()
        if self.interrupted:
            raise KeyboardInterrupt  # the CLI prints one "interrupted" line and exits 130
        return 0


def serve_tcp(host: ServerHost, options: TcpOptions,
              make_server: Callable[[], OpenProgramServer]) -> int:
    """Run the TCP server on 127.0.0.1 (port 0 picks a free one; see the run file)."""

    async def main() -> int:
        return await TcpServer(host, options, make_server).run()

    return asyncio.run(main())
