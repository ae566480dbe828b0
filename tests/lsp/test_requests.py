"""The request table: one ``@handles`` handler per wire request, typed by the wire's model, and
the guard that parses params and turns errors into JSON-RPC errors."""

from __future__ import annotations

import inspect
import logging
from typing import Any, cast, get_type_hints

import pytest
from pygls.exceptions import JsonRpcException

from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.lsp import requests
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.handlers import Handlers
from openprogram_lsp.lsp.requests import handles
from openprogram_lsp.lsp.view import ConnectionView


def server_table() -> dict[str, requests.Handler]:
    """The table a server registers (building it only binds methods: no connection is used)."""
    return Handlers(cast(ConnectionView, object())).table()


def test_every_request_has_one_handler_taking_its_wire_model() -> None:
    table = server_table()
    assert list(table) == list(w.REQUESTS)  # the wire's order, every request once
    for method, guarded in table.items():
        bound = inspect.unwrap(guarded)
        fn = bound.__func__  # type: ignore[attr-defined]
        first = list(inspect.signature(fn).parameters)[1]  # after self
        hints = get_type_hints(fn)
        assert hints[first] is w.REQUESTS[method][0], (method, fn.__qualname__, hints[first])


def test_a_name_not_on_the_wire_is_refused_at_import() -> None:
    with pytest.raises(ValueError, match="openprogram/nope"):
        handles("openprogram/nope")


class One:
    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.seen: list[Any] = []

    @handles("openprogram/cancel")
    async def cancel(self, p: w.SessionParams) -> dict[str, Any]:
        self.seen.append(p)
        if self.fail is not None:
            raise self.fail
        return {"cancelled": True}


class Twice:
    @handles("openprogram/cancel")
    async def cancel(self, p: w.SessionParams) -> dict[str, Any]:
        return {}


def test_a_missing_or_second_handler_is_refused() -> None:
    with pytest.raises(ValueError, match=r"without a handler: .*openprogram/chat"):
        requests.table(One())
    owners = requests.marked(One())
    assert list(owners) == ["openprogram/cancel"]
    with pytest.raises(ValueError, match="openprogram/cancel has two handlers"):
        requests.table(One(), Twice())


async def test_the_guard_hands_the_parsed_model_and_maps_errors(
        caplog: pytest.LogCaptureFixture) -> None:
    one = One()
    handler = requests.guard("openprogram/cancel", one.cancel)
    assert await handler({"sessionId": "s1"}) == {"cancelled": True}
    assert one.seen == [w.SessionParams(session_id="s1")]
    with pytest.raises(JsonRpcException) as bad:
        await handler({"sessionId": 5})
    assert bad.value.code == -32602 and "sessionId" in bad.value.message
    assert len(one.seen) == 1  # a malformed request never reaches the handler
    missing = requests.guard("openprogram/cancel", One(NotFound("unknown session id 's1'")).cancel)
    with pytest.raises(JsonRpcException) as found:
        await missing({"sessionId": "s1"})
    assert found.value.code == NotFound.code and "s1" in found.value.message
    broken = requests.guard("openprogram/cancel", One(RuntimeError("boom")).cancel)
    with caplog.at_level(logging.ERROR), pytest.raises(JsonRpcException) as crash:
        await broken({"sessionId": "s1"})
    assert crash.value.code == -32603
    assert crash.value.message == "openprogram/cancel failed: RuntimeError: boom"
    assert "openprogram/cancel failed" in caplog.text
