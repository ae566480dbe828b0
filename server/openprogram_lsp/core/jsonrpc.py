"""One JSON-RPC 2.0 message from a peer's bytes, checked before anything trusts it.

Shared by the LSP frame reader and the ACP line reader: nesting is measured *before* parsing
(a 100,000-deep ``[[[…`` would exhaust the parser's recursion), then the value must be a
message object of the right shape, or the peer gets the JSON-RPC error it earned (-32700 for
bytes that are not JSON, -32600 for JSON that is not a message) and the link goes on.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_DEPTH = 128  # arrays and objects inside each other; no protocol message comes near it

# a string, or an unterminated one to the end (always a match: never rescanned from inside)
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.S)
_BRACKETS = b"[]{}"
_OTHERS = bytes(b for b in range(256) if b not in _BRACKETS)
# an opening bracket counts 2, a closing one 0: the running sum minus the count is the depth
_CHUNK = 1 << 16
_WEIGHTS = bytes.maketrans(_BRACKETS, b"\x02\x00\x02\x00")


class MessageError(Exception):
    """Bytes that are not a JSON-RPC message; ``msg_id`` when the peer's id could be read."""

    def __init__(self, code: int, message: str, msg_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.msg_id = msg_id


def too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays/objects nest more than ``limit`` deep (brackets inside strings do not
    count); linear, and never recursive."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    weights = _STRING.sub(b"", body).translate(_WEIGHTS, _OTHERS)
    depth = 0
    for at in range(0, len(weights), _CHUNK):  # in chunks: a hostile ``[[[…`` stops early
        part = weights[at:at + _CHUNK]
        if depth + max(map(operator.sub, itertools.accumulate(part), itertools.count(1))) > limit:
            return True
        depth += 2 * part.count(2) - len(part)
    return False


def _id_of(data: dict[str, Any]) -> Any:
    """The message's id when it is a valid one (string or number, not a boolean), else None."""
    msg_id = data.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, str | int | float):
        return None
    return msg_id


def parse_message(body: bytes, *, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """A JSON-RPC 2.0 request, notification or response object; MessageError otherwise."""
    if too_deep(body, max_depth):
        raise MessageError(INVALID_REQUEST, f"nested deeper than {max_depth} levels")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MessageError(PARSE_ERROR, f"invalid JSON: {exc}") from None
    except RecursionError:  # a parser with less stack than the limit assumes
        raise MessageError(INVALID_REQUEST, "nested too deeply") from None
    if isinstance(data, list):
        raise MessageError(INVALID_REQUEST, "batches are not supported")
    if not isinstance(data, dict):
        raise MessageError(INVALID_REQUEST, "a message must be a JSON object")
    known_id = _id_of(data)
    if data.get("jsonrpc") != "2.0":
        raise MessageError(INVALID_REQUEST, 'missing or wrong "jsonrpc" (must be "2.0")',
                           known_id)
    if "id" in data and known_id is None and data["id"] is not None:
        raise MessageError(INVALID_REQUEST, '"id" must be a string or a number')
    method = data.get("method")
    if "method" in data and not isinstance(method, str):
        raise MessageError(INVALID_REQUEST, '"method" must be a string', known_id)
    if method is None:
        if "result" not in data and "error" not in data:
            raise MessageError(INVALID_REQUEST,
                               "neither a request, a notification nor a response", known_id)
        error = data.get("error")
        if "error" in data and not (isinstance(error, dict)
                                    and isinstance(error.get("code"), int)):
            raise MessageError(INVALID_REQUEST,
                               '"error" must be an object with an integer "code"', known_id)
    return data


def error_response(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response (``id`` null when it could not be read)."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
