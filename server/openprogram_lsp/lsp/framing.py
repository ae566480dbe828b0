"""LSP base-protocol framing, read strictly: every malformed frame is answered or ends the link.

pygls's reader matches only ``Content-Length: N`` exactly, so a lowercase or non-numeric length
leaves the connection deaf, a huge length is allocated, and invalid JSON is logged and
dropped. This reader replaces it (see ``docs/decisions/framing.md``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from openprogram_lsp.core import jsonrpc
from openprogram_lsp.core.jsonrpc import INVALID_REQUEST, PARSE_ERROR, error_response

__all__ = ["FrameError", "HttpRequest", "Limits", "error_response", "parse_message", "read_body"]
DEFAULT_MAX_FRAME = 64 * 1024 * 1024
MAX_HEADER_LINE = 8 * 1024
MAX_HEADERS = 32
_HTTP_METHODS = (b"GET ", b"POST ", b"PUT ", b"HEAD ", b"OPTIONS ", b"DELETE ", b"PATCH ",
                 b"CONNECT ", b"TRACE ")
_HTTP_HEADERS = frozenset({"host", "origin", "user-agent", "referer", "sec-fetch-mode",
                           "sec-fetch-site", "upgrade", "connection", "cookie"})


@dataclass(frozen=True, slots=True)
class Limits:
    """How much a peer may send, and how long a started frame may stall."""

    max_frame: int = DEFAULT_MAX_FRAME
    stall: float = 0.75  # seconds without a byte inside a started frame
    refuse_http: bool = False


class FrameError(Exception):
    """A frame that cannot be read; ``fatal`` when the byte stream is no longer in sync."""

    def __init__(self, code: int, message: str, *, msg_id: Any = None,
                 fatal: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.msg_id = msg_id
        self.fatal = fatal


class HttpRequest(Exception):
    """The peer speaks HTTP (a web page posting to loopback): close without answering."""


async def _line(reader: asyncio.StreamReader, stall: float, *, first: bool = False) -> bytes:
    """One header line; before the first byte of a frame the wait is unbounded."""
    start = b""
    if first:  # waiting for a frame to begin is unbounded; once it began, stalls are errors
        try:
            start = await reader.readexactly(1)
        except asyncio.IncompleteReadError:
            return b""
        if start == b"\n":
            return start
    try:
        line = start + await asyncio.wait_for(reader.readuntil(b"\n"), stall)
    except asyncio.IncompleteReadError as exc:
        if exc.partial or start:
            raise FrameError(PARSE_ERROR, "connection ended inside a frame header") from None
        return b""
    except asyncio.LimitOverrunError:
        raise FrameError(PARSE_ERROR, "frame header line too long") from None
    except TimeoutError:
        raise FrameError(PARSE_ERROR, "frame header stalled") from None
    if len(line) > MAX_HEADER_LINE:
        raise FrameError(PARSE_ERROR, "frame header line too long")
    return line


async def read_body(reader: asyncio.StreamReader, limits: Limits) -> bytes | None:
    """The next frame's body; None at a clean end of stream."""
    length: int | None = None
    count = 0
    while True:
        line = await _line(reader, limits.stall, first=count == 0)
        if not line:
            if count:
                raise FrameError(PARSE_ERROR, "connection ended inside a frame header")
            return None
        count += 1
        if limits.refuse_http and count == 1 and line.startswith(_HTTP_METHODS):
            raise HttpRequest(line[:16].decode("latin-1"))
        text = line.rstrip(b"\r\n")
        if not text:
            break
        if count > MAX_HEADERS:
            raise FrameError(PARSE_ERROR, "too many frame headers")
        name, sep, value = text.partition(b":")
        key = name.strip().lower().decode("latin-1")
        if limits.refuse_http and key in _HTTP_HEADERS:
            raise HttpRequest(key)
        if not sep or not key or name != name.strip():
            raise FrameError(PARSE_ERROR, f"malformed frame header {text[:40]!r}")
        if key == "content-length":
            digits = value.strip()
            if not digits.isdigit() or len(digits) > 18:
                raise FrameError(PARSE_ERROR,
                                 f"invalid Content-Length {digits[:20].decode('latin-1')!r}")
            if length is not None and int(digits) != length:
                raise FrameError(PARSE_ERROR, "conflicting Content-Length headers")
            length = int(digits)
    if length is None:
        raise FrameError(PARSE_ERROR, "frame without a Content-Length header")
    if length > limits.max_frame:
        raise FrameError(INVALID_REQUEST,
                         f"frame of {length} bytes is over the limit of {limits.max_frame}")
    try:
        return await _exactly(reader, length, limits.stall)
    except asyncio.IncompleteReadError:
        raise FrameError(PARSE_ERROR, "connection ended inside a frame body") from None


async def _exactly(reader: asyncio.StreamReader, length: int, stall: float) -> bytes:
    """Read ``length`` bytes, failing when none arrive for ``stall`` seconds."""
    parts: list[bytes] = []
    left = length
    while left:
        try:
            chunk = await asyncio.wait_for(reader.read(min(left, 1 << 20)), stall)
        except TimeoutError:
            raise FrameError(PARSE_ERROR, f"frame body stalled: {length - left} of "
                                          f"{length} bytes arrived") from None
        if not chunk:
            raise asyncio.IncompleteReadError(b"".join(parts), length)
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def parse_message(body: bytes) -> dict[str, Any]:
    """A JSON-RPC 2.0 message object from a body (errors per the JSON-RPC spec, not fatal;
    nesting is limited before parsing, see ``core.jsonrpc``)."""
    try:
        return jsonrpc.parse_message(body)
    except jsonrpc.MessageError as err:
        raise FrameError(err.code, err.message, msg_id=err.msg_id, fatal=False) from None


