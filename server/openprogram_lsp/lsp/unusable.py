"""A stand-in server for when the state root cannot be used: every request gets the reason.

An editor that starts the server on a read-only or full ``OPENPROGRAM_HOME`` then shows a
clear error for ``initialize`` instead of a dead process and a traceback. When ``initialize``
was already answered (``lsp.early``), the editor is shown the reason
(``window/showMessage``) and every later request gets it.
"""

from __future__ import annotations

import io
import json
from typing import IO, BinaryIO, Protocol

from openprogram_lsp.lsp.fd_writer import FdWriter

MAX_FRAME = 64 * 1024 * 1024
CONFIG_ERROR = -32005


class _Reader(Protocol):
    def readline(self, limit: int, /) -> bytes: ...

    def read(self, size: int, /) -> bytes: ...


def _read_frame(stdin: _Reader) -> dict[str, object] | None:
    length = None
    while True:
        line = stdin.readline(65536)
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = None
    if length is None or not 0 <= length <= MAX_FRAME:
        return {}
    try:
        message = json.loads(stdin.read(length))
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def _send(stdout: BinaryIO, message: dict[str, object]) -> None:
    body = json.dumps(message).encode()
    FdWriter(stdout).write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


class _Prefixed:
    """``stdin`` read after the bytes already read from it."""

    def __init__(self, read: bytes, stdin: IO[bytes]) -> None:
        self.read_ahead = io.BytesIO(read)
        self.stdin = stdin

    def readline(self, limit: int) -> bytes:
        line = self.read_ahead.readline(limit)
        if line.endswith(b"\n") or len(line) >= limit:
            return line
        return line + self.stdin.readline(limit - len(line))

    def read(self, size: int) -> bytes:
        data = self.read_ahead.read(size)
        while len(data) < size:
            more = self.stdin.read(size - len(data))
            if not more:
                break
            data += more
        return data


def serve_unusable(reason: str, stdin: IO[bytes], stdout: BinaryIO, *, read: bytes = b"",
                   initialized: bool = False) -> int:
    """Answer requests over stdio with ``reason`` until ``exit`` or end of input. ``read``:
    bytes already read from stdin; ``initialized``: ``initialize`` was answered already."""
    if initialized:
        _send(stdout, {"jsonrpc": "2.0", "method": "window/showMessage",
                       "params": {"type": 1, "message": reason}})
    source: _Reader = _Prefixed(read, stdin) if read else stdin
    while True:
        message = _read_frame(source)
        if message is None:
            return 1
        method, msg_id = message.get("method"), message.get("id")
        if method == "exit":
            return 1
        if msg_id is None:
            continue  # a notification
        if method == "shutdown":
            _send(stdout, {"jsonrpc": "2.0", "id": msg_id, "result": None})
            continue
        _send(stdout, {"jsonrpc": "2.0", "id": msg_id,
                       "error": {"code": CONFIG_ERROR, "message": reason}})
