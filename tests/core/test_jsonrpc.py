"""The shared message check: nesting measured before parsing, strings not counted, and each
kind of non-message named with its JSON-RPC code."""

from __future__ import annotations

import pytest

from openprogram_lsp.core.jsonrpc import (
    INVALID_REQUEST,
    MAX_DEPTH,
    PARSE_ERROR,
    MessageError,
    parse_message,
    too_deep,
)


def _nest(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_depth_counts_arrays_and_objects_not_brackets_in_strings() -> None:
    assert not too_deep(_nest(MAX_DEPTH))
    assert too_deep(_nest(MAX_DEPTH + 1))
    assert too_deep(b'{"a":' * (MAX_DEPTH + 1) + b"1" + b"}" * (MAX_DEPTH + 1))
    assert not too_deep(b'{"a":"' + b"[" * 1000 + b'"}')
    assert not too_deep(b'{"a":"\\"' + b"[" * 1000 + b'"}')  # an escaped quote stays inside
    assert too_deep(b'{"a":"\\\\",' + b"[" * 1000)  # an escaped backslash ends the string
    assert too_deep(b"[]" * 100_000 + _nest(MAX_DEPTH + 1))  # past the first chunk
    assert not too_deep(b"[]" * 100_000)


def test_an_unterminated_string_hides_the_rest() -> None:
    # the parser refuses it anyway; what matters is that the scan ends
    assert not too_deep(b'"' + b"\\\"" * 100_000 + b"[" * 1000)


@pytest.mark.parametrize(("body", "code", "msg_id"), [
    (b"[]", INVALID_REQUEST, None),
    (b'[{"jsonrpc":"2.0","id":1,"method":"m"}]', INVALID_REQUEST, None),
    (b'"x"', INVALID_REQUEST, None),
    (b"12345", INVALID_REQUEST, None),
    (b"null", INVALID_REQUEST, None),
    (b"{not json", PARSE_ERROR, None),
    (b"\xff\xfe", PARSE_ERROR, None),
    (b"[" * 100_000, INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":[1],"method":"m"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"m"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":2,"method":3}', INVALID_REQUEST, 2),
    (b'{"jsonrpc":"1.0","id":"a","method":"m"}', INVALID_REQUEST, "a"),
    (b'{"jsonrpc":"2.0","id":4}', INVALID_REQUEST, 4),
    (b'{"jsonrpc":"2.0","id":5,"error":"boom"}', INVALID_REQUEST, 5),
    (b'{"jsonrpc":"2.0","id":6,"error":{"message":"no code"}}', INVALID_REQUEST, 6),
])
def test_what_is_no_message_gets_its_code_and_the_id_when_readable(
        body: bytes, code: int, msg_id: object) -> None:
    with pytest.raises(MessageError) as info:
        parse_message(body)
    assert (info.value.code, info.value.msg_id) == (code, msg_id)


def test_messages_pass() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{}}')["id"] == 1
    assert parse_message(b'{"jsonrpc":"2.0","method":"n"}')["method"] == "n"
    assert parse_message(b'{"jsonrpc":"2.0","id":null,"result":null}')["result"] is None
    assert parse_message(b'{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}}')
