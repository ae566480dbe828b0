"""Responses leave the protocol as the same JSON whether or not cattrs walks them first."""

from __future__ import annotations

import enum
import json
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from openprogram_lsp.lsp.protocol import OpenProgramProtocol


class _Writer:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)

    def close(self) -> None:
        pass


class _Color(enum.Enum):
    RED = "red"


def _sent(protocol_cls: type[Any], result: Any) -> Any:
    server = LanguageServer("t", "0", protocol_cls=protocol_cls)
    writer = _Writer()
    server.protocol.set_writer(writer)  # type: ignore[arg-type]
    server.protocol._send_response(7, result)
    body = writer.frames[-1].split(b"\r\n\r\n", 1)[1]
    return json.loads(body)


def test_a_dict_result_is_sent_as_pygls_would_send_it() -> None:
    from pygls.protocol import LanguageServerProtocol

    results = [
        {"nodes": [{"id": "a", "text": "é\u2028", "caller": None}], "hasMore": False},
        {"nested": types.Position(line=1, character=2), "color": _Color.RED},
        None,
        [1, 2],
        types.Hover(contents="x"),
    ]
    for result in results:
        ours = _sent(OpenProgramProtocol, result)
        assert ours == _sent(LanguageServerProtocol, result), result
        assert ours["id"] == 7 and "result" in ours


def _frame(protocol_cls: type[Any], msg_id: int | str, result: Any) -> bytes:
    server = LanguageServer("t", "0", protocol_cls=protocol_cls)
    writer = _Writer()
    server.protocol.set_writer(writer)  # type: ignore[arg-type]
    server.protocol._send_response(msg_id, result)
    return writer.frames[-1]


def test_a_raw_result_is_framed_as_the_dict_it_encodes() -> None:
    """A kept history page's bytes are spliced in: the same frame, byte for byte, as the dict
    sent the ordinary way (Content-Length, headers, the request id of either kind)."""
    from openprogram_lsp.lsp.protocol import RawResult

    result = {"sessionId": "s", "headId": "h", "hasMore": True,
              "nodes": [{"id": "a", "text": "\u00e9 \u2028 \"q\" \\", "caller": None}]}
    encoded = json.dumps(result).encode()
    for msg_id in (7, 0, 'a "quoted" \u2028 id', ""):
        plain = _frame(OpenProgramProtocol, msg_id, result)
        assert _frame(OpenProgramProtocol, msg_id, RawResult(encoded)) == plain
        head, body = plain.split(b"\r\n\r\n", 1)
        assert f"Content-Length: {len(body)}".encode() in head
        assert json.loads(body) == {"id": msg_id, "jsonrpc": "2.0", "result": result}
