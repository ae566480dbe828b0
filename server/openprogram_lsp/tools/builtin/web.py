"""web_fetch: one HTTP(S) GET, its body as text for the model (HTML as Markdown by
``html-to-markdown``, docs/decisions/web-fetch.md), size-capped and time-limited.

It asks for approval by default (kind ``fetch``; the "always" options cover one host), is
refused when the sandbox's ``network`` setting is off, and follows redirects only on the same
scheme, host and port: a redirect elsewhere is reported, so the new host is asked about in a
call of its own. Only ``http`` and ``https`` URLs are fetched (no ``file:``, no other scheme).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import time
from typing import TYPE_CHECKING, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, Field

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.filetypes import sniff
from openprogram_lsp.core.model import Model
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.descriptions import (
    FETCH_MAX_BYTES,
    FETCH_MAX_CHARS,
    WEB_FETCH,
)
from openprogram_lsp.tools.sandbox import sandbox_settings
from openprogram_lsp.tools.urls import url_host

if TYPE_CHECKING:
    import httpx

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 120.0
MAX_REDIRECTS = 5
USER_AGENT = "openprogram-lsp web_fetch (an AI coding agent, fetching for its user)"
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript",
              "application/x-javascript", "application/xhtml+xml", "application/ld+json",
              "application/rss+xml", "application/atom+xml", "application/x-yaml",
              "application/yaml", "application/toml", "image/svg+xml")


class WebFetchInput(Model):
    url: str = Field(min_length=1, max_length=8192,
                     description="The http:// or https:// URL to fetch")
    format: Literal["markdown", "text", "html"] = Field(
        "markdown", description="How to return an HTML page: markdown (default), text "
        "(no markup) or html (as it came)")
    timeout: float | None = Field(None, gt=0, le=MAX_TIMEOUT, description=f"Seconds for the "
                                  f"whole fetch (default {DEFAULT_TIMEOUT:g})")


def _checked(url: str) -> str:
    """The URL, or a ToolError saying why it cannot be fetched."""
    url = url.strip()
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        what = f"{scheme}:" if scheme else "a URL without a scheme"
        raise ToolError(f"web_fetch fetches http:// and https:// URLs only, not {what}")
    if url_host(url) is None:
        raise ToolError(f"web_fetch: {url!r} has no host (or a bad port)")
    if urlsplit(url).username or urlsplit(url).password:
        raise ToolError("web_fetch: URLs with a user name or password are not fetched")
    if _ours(url):
        raise ToolError("web_fetch: that address is this server's own port; it is not fetched")
    return url


def own_ports() -> set[int]:
    """The TCP ports this process listens on (its ``--tcp`` server, an MCP bridge): a fetch
    must not reach our own state through them. Read from ``/proc`` (Linux); empty elsewhere."""
    inodes: set[str] = set()
    try:
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/self/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    except OSError:
        return set()
    ports: set[int] = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as fh:
            next(fh, None)
            for line in fh:
                fields = line.split()
                if len(fields) > 9 and fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _ours(url: str) -> bool:
    """Whether a URL names a loopback address at one of our own listening ports."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    try:
        loopback = host == "localhost" or host.endswith(".localhost") \
            or ipaddress.ip_address(host).is_loopback or host in ("0.0.0.0", "::")
    except ValueError:
        return False
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    return loopback and port in own_ports()


def _same_origin(a: str, b: str) -> bool:
    return urlsplit(a).scheme.lower() == urlsplit(b).scheme.lower() \
        and url_host(a) == url_host(b)


def html_to_text(html: str, fmt: Literal["markdown", "text"], base: str) -> str:
    """An HTML page as Markdown or plain text (scripts, styles and hidden content dropped,
    links made absolute, inline data media left out)."""
    from html_to_markdown import ConversionOptions, convert  # the Rust extension: on first use

    options = ConversionOptions(output_format="plain" if fmt == "text" else "markdown",
                                base_url=base, inline_data_media="drop_element",
                                extract_metadata=True)
    return convert(html, options).content or ""


class WebFetch(Tool):
    name = "web_fetch"
    description = WEB_FETCH
    kind = "fetch"
    category = "web"
    Input = WebFetchInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, WebFetchInput)
        return f"Fetch {args.url}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, WebFetchInput)
        import httpx  # on first use: a light command never loads it

        url = _checked(args.url)
        if not sandbox_settings(ctx.settings).network:
            raise ToolError("web_fetch is refused: the sandbox's network setting is off "
                            "(`[sandbox] network = false`), so no tool may reach the network")
        limit = args.timeout or DEFAULT_TIMEOUT
        started = time.monotonic()
        try:
            async with asyncio.timeout(limit):
                return await self._fetch(url, args)
        except TimeoutError:
            raise ToolError(f"web_fetch: {url} did not answer within {limit:g} s") from None
        except httpx.HTTPError as exc:
            why = str(exc) or type(exc).__name__
            raise ToolError(f"web_fetch: {url}: {why} (after "
                            f"{time.monotonic() - started:.1f} s)") from None

    async def _fetch(self, url: str, args: WebFetchInput) -> ToolOutput:
        import httpx

        async with httpx.AsyncClient(follow_redirects=False, timeout=httpx.Timeout(
                args.timeout or DEFAULT_TIMEOUT), headers={"User-Agent": USER_AGENT}) as client:
            for _ in range(MAX_REDIRECTS + 1):
                async with client.stream("GET", url) as response:
                    if response.is_redirect and "location" in response.headers:
                        target = urljoin(url, response.headers["location"])
                        if not _same_origin(url, target):
                            return ToolOutput(
                                f"{url} redirects ({response.status_code}) to another host: "
                                f"{target}\nFetch that URL with web_fetch to follow it.",
                                data={"status": response.status_code, "redirect": target})
                        url = _checked(target)
                        continue
                    body, cut = await _read(response)
                    return _result(url, response, body, cut, args.format)
        raise ToolError(f"web_fetch: {args.url}: more than {MAX_REDIRECTS} redirects")


async def _read(response: httpx.Response) -> tuple[bytes, bool]:
    """At most ``FETCH_MAX_BYTES`` of the body, and whether more was left unread."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > FETCH_MAX_BYTES:
            return bytes(body[:FETCH_MAX_BYTES]), True
    return bytes(body), False


def _result(url: str, response: httpx.Response, body: bytes, cut: bool,
            fmt: Literal["markdown", "text", "html"]) -> ToolOutput:
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    status = response.status_code
    head = f"{url} ({status} {response.reason_phrase}, {ctype or 'no content type'})"
    data: dict[str, object] = {"status": status, "content_type": ctype, "bytes": len(body)}
    textual = ctype.startswith(TEXT_TYPES) or (not ctype and sniff(body[:8192]) is None)
    if not textual:
        kind = sniff(body[:65536])
        what = kind.describe(len(body)) if kind is not None else f"{len(body):,} bytes"
        return ToolOutput(f"{head}\n[{ctype or 'binary'} content, {what}"
                          f"{' (at least: cut at the size cap)' if cut else ''}; not shown]",
                          is_error=status >= 400, data=data)
    text = body.decode(response.encoding or "utf-8", "replace")
    if fmt != "html" and (ctype in ("text/html", "application/xhtml+xml")
                          or (not ctype and text.lstrip()[:15].lower().startswith(
                              ("<!doctype html", "<html")))):
        text = html_to_text(text, fmt, url)
    notes = []
    if cut:
        notes.append(f"the body was cut at {FETCH_MAX_BYTES // (1024 * 1024)} MB")
    if len(text) > FETCH_MAX_CHARS:
        notes.append(f"showing the first {FETCH_MAX_CHARS:,} of {len(text):,} characters")
        text = text[:FETCH_MAX_CHARS]
    tail = "".join(f"\n[{n}]" for n in notes)
    return ToolOutput(f"{head}\n\n{text.strip()}{tail}", is_error=status >= 400, data=data)
