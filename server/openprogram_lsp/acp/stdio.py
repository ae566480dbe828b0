"""Stdio for ACP: stdout carries nothing but ACP frames.

The frames go to a private duplicate of file descriptor 1; descriptor 1 itself (and
``sys.stdout``) then points at stderr, so a stray ``print``, a library writing to stdout or a child
process inheriting it can never corrupt the stream.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import BinaryIO


class _WriteProtocol(asyncio.BaseProtocol):
    """Flow control for the frame pipe (what ``StreamWriter.drain`` waits on)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._closed: asyncio.Future[None] = loop.create_future()

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        self._waiter = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        if not self._closed.done():
            self._closed.set_result(None)

    async def _drain_helper(self) -> None:
        if self._paused:
            self._waiter = self._loop.create_future()
            await self._waiter

    def _get_close_waiter(self, stream: object) -> asyncio.Future[None]:
        return self._closed


def claim_stdout() -> BinaryIO:
    """Take descriptor 1 for frames only; from now on it and ``sys.stdout`` write to stderr."""
    sys.stdout.flush()
    frames = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return frames


async def open_streams(frames: BinaryIO, stdin: BinaryIO | None = None,
                       limit: int = 50 * 1024 * 1024
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Asyncio streams over stdin and the claimed frame pipe."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                 stdin or sys.stdin.buffer)
    protocol = _WriteProtocol(loop)
    transport, _ = await loop.connect_write_pipe(lambda: protocol, frames)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer
