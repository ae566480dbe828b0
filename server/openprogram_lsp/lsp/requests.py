"""The custom requests' table: one ``@handles(method)`` beside each handler, nothing else.

A handler is a method taking the request's params model (the one ``wire.REQUESTS`` names for
the method) and returning its result as a JSON-ready dict. ``table`` binds every marked method
of the handler objects it is given and wraps each in one guard: it parses the raw params with
the wire's model (malformed params answer -32602 naming the field), turns project errors into
JSON-RPC errors with their codes, and logs anything unexpected as -32603, so one bad request
never stops the server.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcException

from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.lsp import dumps
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.protocol import RawResult

log = logging.getLogger(__name__)

Answer = dict[str, Any] | RawResult
Handler = Callable[[Any], Awaitable[Answer]]
"""A guarded handler as pygls calls it: raw params in, the answer out."""
F = TypeVar("F", bound=Callable[..., Awaitable[Answer]])
MARK = "_openprogram_method"


def handles(method: str) -> Callable[[F], F]:
    """Mark a handler of ``method`` (a key of ``wire.REQUESTS``: checked here, at import)."""
    if method not in w.REQUESTS:
        raise ValueError(f"{method!r} is not a request of the wire (lsp/wire.py REQUESTS)")

    def mark(fn: F) -> F:
        setattr(fn, MARK, method)
        return fn

    return mark


_MARKS: dict[type, tuple[tuple[str, str], ...]] = {}


def _marks(cls: type) -> tuple[tuple[str, str], ...]:
    """(method, attribute name) of each ``@handles`` method a class defines (read once)."""
    known = _MARKS.get(cls)
    if known is not None:
        return known
    out: dict[str, str] = {}
    for name, attr in vars(cls).items():
        method = getattr(attr, MARK, None)
        if method is not None:
            if method in out:
                raise ValueError(f"{method} has two handlers in {cls.__name__}")
            out[method] = name
    _MARKS[cls] = tuple(out.items())
    return _MARKS[cls]


def marked(owner: object) -> dict[str, Callable[[Any], Awaitable[Answer]]]:
    """Method name -> bound handler, for every ``@handles`` method of ``owner``'s class."""
    return {method: getattr(owner, name) for method, name in _marks(type(owner))}


def table(*owners: object) -> dict[str, Handler]:
    """Method name -> guarded handler over the owners' marked methods, in the wire's order: every
    request of the wire has exactly one."""
    found: dict[str, Callable[[Any], Awaitable[Answer]]] = {}
    for owner in owners:
        for method, fn in marked(owner).items():
            if method in found:
                raise ValueError(f"{method} has two handlers")
            found[method] = fn
    missing = sorted(set(w.REQUESTS) - set(found))
    if missing:
        raise ValueError(f"requests of the wire without a handler: {', '.join(missing)}")
    return {method: guard(method, found[method]) for method in w.REQUESTS}


def _rpc_error(exc: OpenProgramError) -> JsonRpcException:
    return JsonRpcException(message=exc.message, code=exc.code, data=dumps.error_data(exc.data))


def guard(method: str, fn: Callable[[Any], Awaitable[Answer]]) -> Handler:
    """``fn`` called with its params parsed by the wire's model; errors as JSON-RPC errors."""
    model = w.REQUESTS[method][0]

    @functools.wraps(fn)
    async def handler(raw: Any) -> Answer:
        try:
            return await fn(w.parse_params(method, model, raw))
        except OpenProgramError as exc:
            raise _rpc_error(exc) from None
        except (JsonRpcException, asyncio.CancelledError):
            raise
        except Exception as exc:
            log.exception("%s failed", method)
            raise JsonRpcException(message=f"{method} failed: {type(exc).__name__}: {exc}",
                                   code=-32603) from None

    return handler
