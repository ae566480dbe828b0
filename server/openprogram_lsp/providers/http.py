"""HTTP plumbing for remote models: a shared client per event loop, retry policy, SSE parsing."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import importlib
import random
import re
import time
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from openprogram_lsp.config.sections.http import HttpSection
from openprogram_lsp.config.sections.providers import Endpoint
from openprogram_lsp.core.errors import ConfigError, ProviderError

USER_AGENT = "openprogram-lsp/0.1"
MAX_LINE_BYTES = 16 * 1024 * 1024
RETRYABLE_STATUS = frozenset({408, 409, 429})

_clients: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, AsyncGenerator[None, None]]] = (
    weakref.WeakKeyDictionary())


def _new_client() -> httpx.AsyncClient:
    # httpcore imports its async backend on the first request; do it here, off the loop.
    with contextlib.suppress(ImportError):
        importlib.import_module("anyio._backends._asyncio")
    return httpx.AsyncClient(
        http2=False,
        headers={"user-agent": USER_AGENT},
        limits=httpx.Limits(max_connections=32, max_keepalive_connections=8,
                            keepalive_expiry=60.0),
        follow_redirects=False,
    )


async def _closer(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    """Parks until the loop shuts its async generators down (``asyncio.run`` does), then
    closes the client, so a loop that ends without ``aclose_shared_client`` leaks nothing."""
    try:
        yield
    finally:
        await client.aclose()


async def shared_client() -> httpx.AsyncClient:
    """The HTTP/1.1 keep-alive client of the running event loop, created on first use."""
    loop = asyncio.get_running_loop()
    entry = _clients.get(loop)
    if entry is not None and not entry[0].is_closed:
        return entry[0]
    # Building a client loads the CA bundle (~0.1-0.5 s): keep that off the loop.
    fresh = await asyncio.to_thread(_new_client)
    entry = _clients.get(loop)
    if entry is not None and not entry[0].is_closed:
        await fresh.aclose()
        return entry[0]
    keeper = _closer(fresh)
    await keeper.asend(None)
    _clients[loop] = (fresh, keeper)
    return fresh


async def aclose_shared_client() -> None:
    """Close the running loop's shared client (call on shutdown); a no-op when there is none."""
    entry = _clients.pop(asyncio.get_running_loop(), None)
    if entry is not None:
        await entry[1].aclose()  # its ``finally`` closes the client


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Timeouts and the retry policy of one provider."""

    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_cap: float = 20.0
    max_retry_wait: float = 90.0
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)

    @classmethod
    def from_config(cls, section: HttpSection) -> HttpSettings:
        """Timeouts and retries from the validated ``[http]`` section."""
        return cls(connect_timeout=section.connect_timeout, read_timeout=section.read_timeout,
                   max_retries=section.max_retries, max_retry_wait=section.max_retry_wait)

    def timeout(self) -> httpx.Timeout:
        """The httpx timeout: connect and read as configured, write and pool bounded too."""
        return httpx.Timeout(connect=self.connect_timeout, read=self.read_timeout,
                             write=30.0, pool=self.connect_timeout)

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry ``attempt`` (1-based): Retry-After, else jittered 2^n."""
        if retry_after is not None:
            return max(0.0, retry_after)
        ceiling = min(self.backoff_cap, self.backoff_base * (2 ** (attempt - 1)))
        return float(ceiling / 2 + random.uniform(0.0, ceiling / 2))


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds a server asked us to wait (``retry-after-ms``, ``Retry-After`` seconds or date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def status_retryable(status: int, headers: httpx.Headers) -> bool:
    """Whether an HTTP error status is worth retrying (``x-should-retry`` overrides)."""
    hint = (headers.get("x-should-retry") or "").lower()
    if hint in ("true", "false"):
        return hint == "true"
    return status in RETRYABLE_STATUS or status >= 500


_SK_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{2})[A-Za-z0-9_\-*]{6,}")


def resolve_endpoint(endpoint: Endpoint, env: Mapping[str, str], *, base_env: str,
                     key_env: str, default_base: str, official_host: str,
                     hint: str) -> tuple[str, str]:
    """The base URL and API key of a configured endpoint; ConfigError when the official
    endpoint has no key (``hint`` says what else to point the base URL at)."""
    base = endpoint.base_url or default_base
    key = endpoint.key(env, key_env)
    if not key and urlsplit(base).hostname == official_host:
        named = endpoint.api_key_env or key_env
        raise ConfigError(f"{named} is not set: it is needed for {base} (or set "
                          f"{base_env} to {hint})")
    return base, key


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """Remove API keys (the ones we hold and anything shaped like ``sk-...``) from text."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _SK_PATTERN.sub(r"\1***", text)


class SSEParser:
    """Incremental Server-Sent Events parser: bytes in, ``(event, data)`` pairs out.

    Strict on purpose: the model APIs only send ``event``, ``data``, ``id``, ``retry`` and
    comments, so any other line (an HTML error page, a bare JSON error) is reported, not skipped.
    """

    __slots__ = ("_buf", "_data", "_event", "_pending", "provider")

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self._buf = b""
        self._event = ""
        self._data: list[str] | None = None
        self._pending: ProviderError | None = None

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """Parse the complete lines in ``chunk`` (plus what was buffered) into events."""
        if self._pending is not None:
            err, self._pending = self._pending, None
            raise err
        if (not self._buf and self._data is None and not self._event
                and chunk.endswith(b"\n\n") and b"\r" not in chunk):
            # The common case: one whole event in one chunk (``data:``, maybe after ``event:``).
            end = len(chunk) - 2
            if chunk.startswith(b"data: ") and chunk.find(b"\n") == end:
                return [("message", self._decode(chunk[6:-2]))]
            nl = chunk.find(b"\n")
            if (chunk.startswith(b"event: ") and chunk.startswith(b"data: ", nl + 1)
                    and chunk.find(b"\n", nl + 1) == end):
                return [(self._decode(chunk[7:nl]), self._decode(chunk[nl + 7:-2]))]
        if self._buf:
            chunk = self._buf + chunk
        lines = chunk.split(b"\n")
        self._buf = lines.pop()
        if len(self._buf) > MAX_LINE_BYTES:
            raise ProviderError("malformed stream: a line longer than 16 MiB",
                                provider=self.provider)
        out: list[tuple[str, str]] = []
        for raw in lines:
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if not raw:
                if self._data is not None:
                    out.append((self._event or "message", "\n".join(self._data)))
                self._event, self._data = "", None
                continue
            name, _, value = raw.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if name == b"data":
                text = self._decode(value)
                if self._data is None:
                    self._data = [text]
                else:
                    self._data.append(text)
            elif name == b"event":
                self._event = self._decode(value)
            elif not name or name in (b"id", b"retry"):
                continue
            else:
                if out:  # events before the bad line are kept; the error comes next feed
                    self._pending = self._malformed(raw)
                    self._buf = b""
                    return out
                raise self._malformed(raw)
        return out

    def close(self) -> None:
        """Drop an incomplete trailing event, as the SSE standard says (a malformed line
        held back by ``feed`` is raised now)."""
        self._buf, self._event, self._data = b"", "", None
        if self._pending is not None:
            err, self._pending = self._pending, None
            raise err

    def _decode(self, value: bytes) -> str:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise ProviderError("malformed stream: a line that is not UTF-8",
                                provider=self.provider) from None

    def _malformed(self, raw: bytes) -> ProviderError:
        line = raw.decode("utf-8", "replace")
        return ProviderError(f"malformed stream: unexpected line {line[:200]!r}",
                             provider=self.provider)
