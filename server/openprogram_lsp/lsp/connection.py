"""One client link: strict frames in, pygls protocol handling, errors answered, optional token.

With a token, the first message must be ``initialize`` carrying
``initializationOptions.token``; anything else is answered with -32006 and the link closed.
The LSP lifecycle holds on every link: a request before ``initialize`` is answered -32002
(ServerNotInitialized), one after ``shutdown`` -32600, and notifications then are dropped
(``exit`` excepted).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

from openprogram_lsp.core.errors import Unauthorized
from openprogram_lsp.core.jsonrpc import INVALID_REQUEST
from openprogram_lsp.lsp.framing import (
    FrameError,
    HttpRequest,
    Limits,
    error_response,
    parse_message,
    read_body,
)

log = logging.getLogger(__name__)
SERVER_NOT_INITIALIZED = -32002


def _token_of(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    token = options.pop("token", None) if isinstance(options, dict) else None
    return token if isinstance(token, str) else None


class Connection:
    """Reads one peer's frames into a protocol until the peer leaves or breaks the framing."""

    def __init__(self, protocol: JsonRPCProtocol, reader: asyncio.StreamReader, *,
                 limits: Limits, token: str | None = None,
                 close: Callable[[], None] | None = None) -> None:
        self.protocol = protocol
        self.reader = reader
        self.limits = limits
        self.token = token
        self.authenticated = token is None
        self._close = close
        self.closed = False
        self.reason = ""
        self.initialized = False  # ``initialize`` arrived on this link

    def send(self, data: dict[str, Any]) -> None:
        """Write one message (best effort: the peer may be gone)."""
        try:
            self.protocol._send_data(data)
        except Exception:
            log.debug("could not answer a bad frame", exc_info=True)

    def close(self, reason: str) -> None:
        """End the link (idempotent)."""
        if self.closed:
            return
        self.closed, self.reason = True, reason
        if self._close is not None:
            try:
                self._close()
            except Exception:
                log.debug("closing the link failed", exc_info=True)

    async def run(self, first: dict[str, Any] | None = None) -> str:
        """Serve until the end; returns why the link ended. ``first``: a message read before
        the link existed (``lsp.early``), handled before anything read here."""
        if first is not None and (self.authenticated or self._authenticate(first)):
            self._dispatch(first)
        while not self.closed:
            try:
                body = await read_body(self.reader, self.limits)
                if body is None:
                    self.close("the client closed the connection")
                    break
                message = parse_message(body)
            except HttpRequest:
                self.close("refused an HTTP request")
                break
            except FrameError as err:
                self.send(error_response(err.msg_id, err.code, err.message))
                if err.fatal:
                    self.close(f"bad frame: {err.message}")
                    break
                continue
            except (ConnectionError, OSError) as exc:
                self.close(f"connection lost: {exc}")
                break
            if not self.authenticated and not self._authenticate(message):
                break
            self._dispatch(message)
        return self.reason

    def _authenticate(self, message: dict[str, Any]) -> bool:
        offered = _token_of(message) if message.get("method") == "initialize" else None
        assert self.token is not None
        if offered is not None and hmac.compare_digest(offered.encode(), self.token.encode()):
            self.authenticated = True
            return True
        err = Unauthorized("unauthorized: the first message must be initialize with "
                           "initializationOptions.token (see $OPENPROGRAM_HOME/run/<port>.json)")
        if "id" in message and "method" in message:
            self.send(error_response(message["id"], err.code, err.message))
        self.close("unauthenticated client")
        return False

    def _lifecycle(self, message: dict[str, Any]) -> bool:
        """Whether the message may run now; answers the requests that may not."""
        method = message.get("method")
        if method is None or method == "exit":  # responses, and exit at any time
            return True
        error: tuple[int, str] | None = None
        if getattr(self.protocol, "_shutdown", False):
            error = (INVALID_REQUEST, f"{method}: the server is shutting down (shutdown was "
                                      "requested; only exit is accepted)")
        elif method == "initialize":
            if not self.initialized:
                self.initialized = True
                return True
            error = (INVALID_REQUEST, "initialize: the server is already initialized")
        elif not self.initialized:
            error = (SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized "
                                             "(send initialize first)")
        if error is None:
            return True
        if "id" in message:
            self.send(error_response(message["id"], *error))
        return False

    def _dispatch(self, message: dict[str, Any]) -> None:
        if not self._lifecycle(message):
            return
        try:
            structured = self.protocol.structure_message(message)
        except JsonRpcException as exc:  # params of a standard method that do not structure
            if "id" in message and "method" in message:
                self.send(error_response(message["id"], exc.code,
                                         f"invalid params for {message['method']}"))
            return
        try:
            self.protocol.handle_message(structured)
        except SystemExit:
            raise
        except Exception:
            log.exception("could not handle %s", json.dumps(message.get("method")))
            if "id" in message and "method" in message:
                self.send(error_response(message["id"], -32603, "internal error"))
