"""Running one streaming model request: retries, cancel, SSE decoding into provider events."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import httpx

from openprogram_lsp.core.errors import ProviderError
from openprogram_lsp.core.types import Usage
from openprogram_lsp.providers.base import ProviderEvent, StreamEnd
from openprogram_lsp.providers.http import (
    HttpSettings,
    SSEParser,
    parse_retry_after,
    redact,
    shared_client,
    status_retryable,
)

MAX_ERROR_BODY = 64 * 1024


class Decoder(Protocol):
    """Turns one API's SSE events into provider events."""

    usage: Usage

    def feed(self, event: str, data: str) -> list[ProviderEvent]:
        """Decode one SSE event; raises ProviderError on an error event or bad JSON."""
        ...

    def finish(self) -> list[ProviderEvent]:
        """The closing events at end of stream (ending with StreamEnd); raises if truncated."""
        ...

    def reset(self) -> None:
        """Forget everything decoded so far (before a retried attempt)."""
        ...


@dataclass(slots=True)
class HttpCall:
    """One streaming POST: where, what, and how to talk about failures."""

    provider: str
    url: str
    body: dict[str, Any] = field(repr=False)
    headers: dict[str, str] = field(repr=False)
    key_env: str
    has_key: bool
    secrets: tuple[str, ...] = field(default=(), repr=False)
    base_env: str = ""
    on_rejected: Callable[[ProviderError], dict[str, Any] | None] | None = field(
        default=None, repr=False)


class _Done:
    """Queue marker: the stream finished normally."""


_DONE = _Done()
_Item = list[ProviderEvent] | BaseException | _Done


def _clean(err: ProviderError, call: HttpCall) -> ProviderError:
    """The same error with any secret removed from its message."""
    message = err.message
    prefix = f"{err.provider}: "
    if err.provider and message.startswith(prefix):
        message = message[len(prefix):]
    cleaned = redact(message, call.secrets)
    if cleaned == message and err.provider:
        return err
    return ProviderError(cleaned, provider=err.provider or call.provider,
                         retryable=err.retryable, status=err.status,
                         retry_after=err.retry_after)


def error_message(body: bytes) -> str:
    """The human message in an API error body (OpenAI and Anthropic shapes), else its text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        obj = json.loads(text)
    except ValueError:
        return text[:500]
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            kind = err.get("type")
            message = str(err["message"])
            return f"{message} ({kind})" if isinstance(kind, str) and kind else message
        if isinstance(err, str):
            return err
    return text[:500]


def status_error(call: HttpCall, status: int, headers: httpx.Headers,
                 body: bytes) -> ProviderError:
    """The ProviderError an HTTP error response becomes, with advice for auth failures."""
    detail = redact(error_message(body), call.secrets)
    if status in (401, 403):
        hint = (f"check {call.key_env}" if call.has_key
                else f"{call.key_env} is not set; set it to your API key")
        msg = f"authentication failed (HTTP {status}): {hint}"
        return ProviderError(f"{msg} (server said: {detail})" if detail else msg,
                             provider=call.provider, status=status)
    retryable = status_retryable(status, headers)
    msg = f"HTTP {status}" + (f": {detail}" if detail else "")
    if status == 404 and call.base_env:
        msg += f" (check the model name and {call.base_env})"
    elif 300 <= status < 400:
        where = headers.get("location")
        msg += (f" (redirected to {where}; " if where else " (") + f"check {call.base_env})"
    return ProviderError(msg, provider=call.provider, retryable=retryable, status=status,
                         retry_after=parse_retry_after(headers))


def _shown(url: str) -> str:
    """A URL fit for a message: any user:password part removed."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _transport_error(call: HttpCall, exc: httpx.HTTPError, settings: HttpSettings,
                     midway: bool) -> ProviderError:
    """The ProviderError a connection-level failure becomes."""
    if isinstance(exc, httpx.ConnectTimeout):
        msg = f"timed out connecting to {_shown(call.url)} after {settings.connect_timeout:g}s"
    elif isinstance(exc, httpx.ConnectError):
        msg = f"cannot connect to {_shown(call.url)}: {exc}"
    elif isinstance(exc, httpx.ReadTimeout):
        msg = f"no data from the server for {settings.read_timeout:g}s (read timeout)"
    elif midway:
        msg = f"the stream broke mid-way: {_detail(exc)}"
    else:
        msg = f"HTTP transport error: {_detail(exc)}"
    return ProviderError(redact(msg, call.secrets), provider=call.provider, retryable=True)


def _detail(exc: BaseException) -> str:
    """What went wrong, never empty: the message, else its cause's, else the type's name."""
    for err in (exc, exc.__cause__, exc.__context__):
        if err is not None and str(err).strip():
            return f"{str(err).strip()} ({type(exc).__name__})"
    return type(exc).__name__


async def _read_bounded(resp: httpx.Response) -> bytes:
    """The first MAX_ERROR_BODY bytes of a (non-stream) response body."""
    body = b""
    async for part in resp.aiter_bytes():
        body += part
        if len(body) >= MAX_ERROR_BODY:
            break
    return body


async def _produce(call: HttpCall, decoder: Decoder, settings: HttpSettings,
                   queue: asyncio.Queue[_Item]) -> None:
    """Send the request (retrying while nothing was delivered) and queue decoded events."""
    client = await shared_client()
    timeout = settings.timeout()
    started = time.monotonic()
    attempt = 0
    delivered = False
    while True:
        attempt += 1
        midway = False
        try:
            async with client.stream("POST", call.url, json=call.body, headers=call.headers,
                                     timeout=timeout) as resp:
                ctype = resp.headers.get("content-type", "")
                if not 200 <= resp.status_code < 300 or "json" in ctype:
                    body = await _read_bounded(resp)
                    if resp.status_code >= 300:
                        raise status_error(call, resp.status_code, resp.headers, body)
                    raise ProviderError(
                        "the server answered with JSON instead of an event stream: "
                        f"{redact(error_message(body), call.secrets)[:300]}",
                        provider=call.provider)
                if ctype and "event-stream" not in ctype:  # a captive portal, a proxy page
                    body = await _read_bounded(resp)
                    text = " ".join(body.decode("utf-8", "replace").split())
                    raise ProviderError(
                        f"the server answered HTTP {resp.status_code} with {ctype.split(';')[0]}"
                        f" instead of an event stream (a proxy or captive portal?): "
                        f"{redact(text, call.secrets)[:200]!r}", provider=call.provider)
                midway = True
                parser = SSEParser(call.provider)
                async for chunk in resp.aiter_bytes():
                    out: list[ProviderEvent] = []
                    try:
                        for event, data in parser.feed(chunk):
                            out.extend(decoder.feed(event, data))
                    finally:  # what was decoded before a malformed line is still delivered
                        if out:
                            delivered = True
                            queue.put_nowait(out)
                parser.close()
                final = decoder.finish()
            queue.put_nowait(final)
            queue.put_nowait(_DONE)
            return
        except ProviderError as exc:
            err = _clean(exc, call)
        except httpx.HTTPError as exc:
            err = _transport_error(call, exc, settings, midway)
        if err.status == 400 and not delivered and call.on_rejected is not None:
            adjusted, call.on_rejected = call.on_rejected(err), None
            if adjusted is not None:  # the server refused an optional field: once without it
                call.body = adjusted
                attempt -= 1
                continue
        if not err.retryable or delivered or attempt > settings.max_retries:
            if err.retryable and attempt > 1 and not delivered:
                err = ProviderError(f"{_bare(err)} (gave up after {attempt} attempts)",
                                    provider=call.provider, retryable=False,
                                    status=err.status)
            queue.put_nowait(err)
            return
        delay = settings.backoff(attempt, err.retry_after)
        if time.monotonic() - started + delay > settings.max_retry_wait:
            queue.put_nowait(ProviderError(
                f"{_bare(err)} (not retrying: waiting {delay:.1f}s more would pass the "
                f"{settings.max_retry_wait:g}s retry budget)",
                provider=call.provider, status=err.status, retry_after=err.retry_after))
            return
        await settings.sleep(delay)
        decoder.reset()


async def _produce_guarded(call: HttpCall, decoder: Decoder, settings: HttpSettings,
                           queue: asyncio.Queue[_Item]) -> None:
    """Run the producer so that any failure reaches the consumer instead of hanging it."""
    try:
        await _produce(call, decoder, settings, queue)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        queue.put_nowait(ProviderError(redact(f"unexpected failure: {exc!r}", call.secrets),
                                       provider=call.provider))


def _bare(err: ProviderError) -> str:
    prefix = f"{err.provider}: "
    return err.message[len(prefix):] if err.message.startswith(prefix) else err.message


async def _watch(cancel: asyncio.Event, producer: asyncio.Task[None],
                 queue: asyncio.Queue[_Item]) -> None:
    """On cancel, stop the producer (closing the HTTP stream) and wake the consumer."""
    await cancel.wait()
    producer.cancel()
    queue.put_nowait(_DONE)


async def stream_events(call: HttpCall, decoder: Decoder, settings: HttpSettings,
                        cancel: asyncio.Event | None) -> AsyncIterator[ProviderEvent]:
    """Stream a request's provider events; ends with StreamEnd (``cancelled`` on cancel)."""
    if cancel is not None and cancel.is_set():
        yield StreamEnd("cancelled", decoder.usage)
        return
    queue: asyncio.Queue[_Item] = asyncio.Queue()
    producer = asyncio.create_task(_produce_guarded(call, decoder, settings, queue))
    watcher = (asyncio.create_task(_watch(cancel, producer, queue))
               if cancel is not None else None)
    try:
        while True:
            item = await queue.get()
            if cancel is not None and cancel.is_set():
                yield StreamEnd("cancelled", decoder.usage)
                return
            if isinstance(item, _Done):
                return
            if isinstance(item, BaseException):
                raise item
            for ev in item:
                yield ev
    finally:
        # Cancel the producer once: a second cancel would interrupt the first one's cleanup
        # (closing the HTTP response) and leak the connection.
        if not producer.done() and not producer.cancelling():
            producer.cancel()
        if watcher is not None:
            watcher.cancel()
        # Shielded: the turn's cancel also cancels our consumer (agent.loop._race), and were
        # that to reach this wait, gather would pass it on to the producer mid-close.
        with contextlib.suppress(Exception):
            await asyncio.shield(asyncio.gather(producer, *([watcher] if watcher else []),
                                                return_exceptions=True))
