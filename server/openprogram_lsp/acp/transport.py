"""ACP's newline-delimited frames, checked before the SDK sees them.

The SDK's own reader hands whatever ``json.loads`` returns to its receive loop, which assumes a
dict: one line holding ``[]``, ``"x"``, ``12345`` or ``null`` ended the loop and with it every
session (exit 70), invalid JSON was dropped unanswered, a 100,000-deep line exhausted the
parser, and a line had no size bound at all. This transport gives the SDK only well-formed
message objects (``core.jsonrpc``): anything else is answered with its JSON-RPC error (id
null unless the peer's id could be read) and the connection goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from openprogram_lsp.core.jsonrpc import (
    INVALID_REQUEST,
    MessageError,
    error_response,
    parse_message,
)

log = logging.getLogger(__name__)
MAX_LINE = 50 * 1024 * 1024  # the SDK's own stdio buffer limit


class CheckedTransport:
    """The SDK's ``Transport`` over a stream pair, answering every line that is no message."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 max_line: int = MAX_LINE) -> None:
        self.reader = reader
        self.writer = writer
        self.max_line = max_line
        self._drain = asyncio.Lock()  # one drain at a time (the pipe protocol has one waiter)
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("Transport closed")
        self.writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        async with self._drain:
            await self.writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._line()
            if line is None:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                return parse_message(line)
            except MessageError as err:
                log.info("answered a bad ACP frame: %s", err.message)
                await self._answer(error_response(err.msg_id, err.code, err.message))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.writer.close()
        except Exception:
            log.debug("closing the frame pipe failed", exc_info=True)

    async def _answer(self, message: dict[str, Any]) -> None:
        try:
            await self.send(message)
        except (ConnectionError, OSError):
            log.debug("could not answer a bad frame", exc_info=True)

    async def _line(self) -> bytes | None:
        """The next line, None at the end; an over-long one is answered and skipped."""
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = await self.reader.readuntil(b"\n")
                end = True
            except asyncio.IncompleteReadError as exc:
                chunk, end = exc.partial, True
                if not chunk and not size:
                    return None
            except asyncio.LimitOverrunError as exc:  # longer than the reader's buffer
                chunk, end = await self.reader.readexactly(exc.consumed), False
            size += len(chunk)
            if size <= self.max_line:
                parts.append(chunk)
            else:
                parts.clear()  # past the limit: only counted, never kept
            if not end:
                continue
            if size <= self.max_line:
                return b"".join(parts)
            await self._answer(error_response(
                None, INVALID_REQUEST,
                f"message of {size} bytes is over the limit of {self.max_line}"))
            parts, size = [], 0

