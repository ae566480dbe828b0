"""One editor over stdin/stdout: the strict frame reader, and the process ends with the link."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import threading
from typing import IO, TYPE_CHECKING

from openprogram_lsp.lsp.connection import Connection
from openprogram_lsp.lsp.early import EarlyStart
from openprogram_lsp.lsp.fd_writer import FdWriter
from openprogram_lsp.lsp.framing import DEFAULT_MAX_FRAME, Limits
from openprogram_lsp.lsp.protocol import OpenProgramProtocol

if TYPE_CHECKING:
    from openprogram_lsp.lsp.server import OpenProgramServer

log = logging.getLogger(__name__)


def _feed_from_thread(reader: asyncio.StreamReader, fd: int,
                      loop: asyncio.AbstractEventLoop) -> None:
    """Feed a stream reader from a blocking descriptor (a file, or anything not pollable)."""

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            if loop.is_closed():
                return
            if not chunk:
                loop.call_soon_threadsafe(reader.feed_eof)
                return
            loop.call_soon_threadsafe(reader.feed_data, chunk)

    threading.Thread(target=pump, name="openprogram-stdin", daemon=True).start()


async def _stdin_reader(stdin: IO[bytes], limit: int, read: bytes = b"") -> asyncio.StreamReader:
    """A reader of stdin that first gives the bytes ``read`` from it before (``lsp.early``)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    if read:
        reader.feed_data(read)
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except OSError:
        mode = 0
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        # a file, /dev/null, a terminal: epoll refuses some of them only later, inside the
        # loop, and the reader would never see their end; a thread reads them reliably
        _feed_from_thread(reader, stdin.fileno(), loop)
        return reader
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):
        _feed_from_thread(reader, stdin.fileno(), loop)
    return reader


def serve_stdio(server: OpenProgramServer, stdin: IO[bytes], stdout: IO[bytes], *,
                max_frame: int = DEFAULT_MAX_FRAME, early: EarlyStart | None = None) -> int:
    """Serve one editor until ``exit`` or the end of stdin; returns the exit code. ``early``:
    what was read, and answered, before the server was built (``lsp.early``)."""
    code: list[int] = []
    early = early or EarlyStart()

    async def main() -> None:
        server.protocol.set_writer(FdWriter(stdout))  # every byte, whatever stdout's mode
        if early.message is not None and isinstance(server.protocol, OpenProgramProtocol):
            server.protocol.answered_early = (early.message["id"], early.result)
        limits = Limits(max_frame=max_frame)
        reader = await _stdin_reader(stdin, 64 * 1024, early.read)
        link = Connection(server.protocol, reader, limits=limits)

        def end(exit_code: int) -> None:
            code.append(exit_code)
            link.close("exit")

        server.end_link = end
        reason = await link.run(first=early.message)
        log.info("client gone: %s", reason)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.host.stop(), 30)

    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("the client is gone; shutting down")
    except KeyboardInterrupt:
        pass
    return code[0] if code else 0
