"""The pygls protocol subclass: custom methods pass their params through as plain JSON.

pygls turns params of unknown methods into namedtuples, and typed attrs params that fail to
structure leave the request unanswered. Raw message types keep params as dicts so the handlers
validate them with pydantic and always answer (-32602 on bad params).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Generator
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method

from openprogram_lsp.lsp import methods

log = logging.getLogger(__name__)
_WRITES: set[asyncio.Future[Any]] = set()


@attrs.define
class RawRequest:
    """A request whose params stay plain JSON (no defaults: lsprotocol omits default fields)."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    """A notification whose params stay plain JSON."""

    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawResponse:
    """A response whose result stays plain JSON."""

    id: int | str
    jsonrpc: str
    result: Any = None


class RawResult:
    """A result already encoded: the JSON text of one value, ASCII (a kept history page).

    The protocol splices it into the response as it is; whoever makes one has checked that it
    is exactly one JSON value."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


_NOTIFICATIONS = frozenset(methods.CLIENT_NOTIFICATIONS + methods.SERVER_NOTIFICATIONS)


class OpenProgramProtocol(LanguageServerProtocol):
    """LanguageServerProtocol with pass-through message types for ``openprogram/*``."""

    answered_early: tuple[Any, Any] | None = None
    """(id, result) of an ``initialize`` answered before the server was built (``lsp.early``):
    its answer here is not sent again."""
    shutdown_requested: bool = False
    """Set when ``shutdown`` arrives (pygls sets ``_shutdown`` only once its handler is done):
    an ``exit`` read meanwhile still follows a shutdown, so it ends the process with 0."""

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """Raw types for the custom methods, lsprotocol types for the rest."""
        if method.startswith("openprogram/"):
            return RawNotification if method in _NOTIFICATIONS else RawRequest
        return super().get_message_type(method)  # type: ignore[no-any-return]

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """Responses to the server's custom requests stay plain JSON."""
        if method.startswith("openprogram/"):
            return RawResponse
        return super().get_result_type(method)  # type: ignore[no-any-return]

    def _serialize_message(self, data: Any) -> Any:
        """A response whose result is a dict (what every ``openprogram/*`` handler returns,
        JSON-ready) goes to ``json.dumps`` as it is, instead of cattrs walking the whole
        result first (a 200-node ``openprogram/history`` page spent most of its send time
        there). Anything else, and anything non-JSON nested in a result, goes the pygls way."""
        if type(data) in (RawResponse, JsonRPCResponseMessage) and type(data.result) is dict:
            return {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
        return super()._serialize_message(data)

    def _send_data(self, data: Any) -> None:
        """A response whose result is a ``RawResult`` is framed around its bytes: the same
        bytes ``json.dumps`` of the whole response would give, without parsing or dumping the
        result (the rest goes the pygls way). Stream deltas the event bridge holds go out
        first: no response, request or log overtakes text streamed before it."""
        early = self.answered_early
        if early is not None and type(data) in (
                JsonRPCResponseMessage, types.ResponseErrorMessage) and data.id == early[0]:
            self.answered_early = None
            self._drop_early(data, *early)
            return
        bridge = getattr(self._server, "bridge", None)
        if bridge is not None:
            bridge.flush()
        if type(data) not in (RawResponse, JsonRPCResponseMessage) \
                or type(data.result) is not RawResult:
            super()._send_data(data)
            return
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        body = b'{"id": %s, "jsonrpc": %s, "result": %s}' % (
            json.dumps(data.id).encode(), json.dumps(data.jsonrpc).encode(), data.result.data)
        if self._include_headers:
            body = b"Content-Length: %d\r\nContent-Type: %s; charset=%s\r\n\r\n%s" % (
                len(body), self.CONTENT_TYPE.encode(), self.CHARSET.encode(), body)
        try:
            res = self.writer.write(body)
            if inspect.isawaitable(res):  # an async writer (ours are not)
                pending = asyncio.ensure_future(res)
                _WRITES.add(pending)
                pending.add_done_callback(_WRITES.discard)
        except BrokenPipeError:
            log.exception("Error sending data. BrokenPipeError")
            raise
        except Exception as error:
            log.exception("Error sending data")
            self._server._report_server_error(error, JsonRpcInternalError)

    def _drop_early(self, data: Any, msg_id: Any, sent: Any) -> None:
        """The server's own answer to the ``initialize`` answered early: not sent; one that
        differs from what was sent is an error in the log (``lsp.capabilities`` prevents it)."""
        own = json.loads(json.dumps(data, default=self._serialize_message))
        if own.get("result") != sent:
            log.error("initialize %s was answered early with %s; the server's answer is %s",
                      json.dumps(msg_id), json.dumps(sent), json.dumps(own))

    def forget_request(self, msg_id: str) -> None:
        """Stop waiting for a response to a server request (a late answer is then ignored)."""
        self._request_futures.pop(msg_id, None)
        self._result_types.pop(msg_id, None)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """Note the request as it is read, then pygls' own shutdown (its handler, then
        ``_shutdown``)."""
        self.shutdown_requested = True
        return (yield from super().lsp_shutdown(*args))

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """``exit`` ends this connection (the server decides whether the process ends too)."""
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        code = 0 if self._shutdown or self.shutdown_requested else 1
        exit_link = getattr(self._server, "exit_link", None)
        if exit_link is not None:
            exit_link(code)
        else:  # pragma: no cover - a plain pygls server
            raise SystemExit(code)
