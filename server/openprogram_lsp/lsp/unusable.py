"""A stand-in server for when the state root cannot be used: every request gets the reason.

An editor that starts the server on a read-only or full ``OPENPROGRAM_HOME`` then shows a
clear error for ``initialize`` instead of a dead process and a traceback.
"""

from __future__ import annotations

import json
from typing import BinaryIO

MAX_FRAME = 64 * 1024 * 1024
CONFIG_ERROR = -32005


def _read_frame(stdin: BinaryIO) -> dict[str, object] | None:
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
    stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdout.flush()


def serve_unusable(reason: str, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer requests over stdio with ``reason`` until ``exit`` or end of input."""
    while True:
        message = _read_frame(stdin)
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
