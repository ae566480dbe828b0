"""Streaming a 5,000-chunk response through the provider layer vs a bare httpx stream.

Same run, same loopback server, same bytes: the provider figure (SSE parsing, JSON decoding,
events through the async generator) beside a bare ``httpx`` stream reading the same response
line by line (target ratio <= 1.5), and beside reading it as raw bytes for reference. Also the
time from setting the cancel event to the server seeing the connection closed (target < 1 s).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.providers.loopback import LoopbackServer, Reply
from tests.providers.wire import AnthropicStream, OpenAIStream

from _util import report
from openprogram_lsp.core.types import Message
from openprogram_lsp.providers.anthropic import AnthropicProvider
from openprogram_lsp.providers.base import ModelRequest, Provider, TextDelta
from openprogram_lsp.providers.http import HttpSettings, aclose_shared_client, shared_client
from openprogram_lsp.providers.openai import OpenAIProvider

CHUNKS = int(os.environ.get("BENCH_CHUNKS", "5000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "9"))
TOKENS = [f" tok{i % 97}" for i in range(CHUNKS)]
REQUEST = ModelRequest(system="bench", messages=[Message(role="user", content="go")], tools=[])


async def through_provider(provider: Provider) -> int:
    """Characters of text received through the provider layer."""
    n = 0
    async for ev in provider.stream(REQUEST):
        if isinstance(ev, TextDelta):
            n += len(ev.text)
    return n


async def bare_lines(url: str) -> int:
    """Lines received by a bare httpx stream of the same response."""
    n = 0
    async with (await shared_client()).stream("POST", url, json={"bench": True}) as resp:
        async for _line in resp.aiter_lines():
            n += 1
    return n


async def bare_bytes(url: str) -> int:
    """Bytes received by a bare httpx stream of the same response."""
    n = 0
    async with (await shared_client()).stream("POST", url, json={"bench": True}) as resp:
        async for chunk in resp.aiter_bytes():
            n += len(chunk)
    return n


async def timed(server: LoopbackServer, chunks: list[bytes],
                fn: Callable[[], Awaitable[int]]) -> float:
    """Seconds for one streamed response, the server replaying ``chunks``."""
    server.queue(Reply(chunks=chunks))
    t0 = time.perf_counter()
    await fn()
    return time.perf_counter() - t0


async def compare(label: str, server: LoopbackServer, chunks: list[bytes], provider: Provider,
                  url: str) -> None:
    """Interleave the three readers over several rounds and report medians."""
    ours: list[float] = []
    lines: list[float] = []
    raw: list[float] = []
    await timed(server, chunks, lambda: through_provider(provider))  # warm up
    await timed(server, chunks, lambda: bare_lines(url))
    for _ in range(ROUNDS):
        ours.append(await timed(server, chunks, lambda: through_provider(provider)))
        lines.append(await timed(server, chunks, lambda: bare_lines(url)))
        raw.append(await timed(server, chunks, lambda: bare_bytes(url)))
    ours_m, lines_m = statistics.median(ours), statistics.median(lines)
    report(f"{label}: {CHUNKS} chunks via provider", ours_m, lines_m, target="ratio <= 1.5")
    report(f"{label}: bare httpx aiter_bytes (reference)", statistics.median(raw), lines_m)


async def cancel_latency(server: LoopbackServer, provider: Provider, chunks: list[bytes],
                         head: int) -> float:
    """Seconds from setting the cancel event to the server seeing the client leave."""
    server.client_left.clear()
    server.queue(Reply(chunks=chunks[:head], hold=True))
    cancel = asyncio.Event()
    req = ModelRequest(system="bench", messages=REQUEST.messages, tools=[], cancel=cancel)
    async for ev in provider.stream(req):
        if isinstance(ev, TextDelta) and not cancel.is_set():
            t0 = time.perf_counter()
            cancel.set()
    left = await asyncio.to_thread(server.client_left.wait, 10)
    assert left, "the server never saw the client leave"
    return time.perf_counter() - t0


async def main() -> None:
    server = LoopbackServer().start()
    try:
        settings = HttpSettings(max_retries=0)
        oa = OpenAIProvider("bench", base_url=f"{server.url}/v1", settings=settings)
        an = AnthropicProvider("bench", base_url=server.url, settings=settings)
        oa_chunks = OpenAIStream(text=TOKENS).events()
        an_chunks = AnthropicStream(text=TOKENS).events()
        print(f"openai stream: {sum(map(len, oa_chunks)):,} bytes in {len(oa_chunks):,} "
              f"HTTP chunks; anthropic: {sum(map(len, an_chunks)):,} bytes in "
              f"{len(an_chunks):,}", flush=True)
        await compare("openai", server, oa_chunks, oa, f"{server.url}/v1/chat/completions")
        await compare("anthropic", server, an_chunks, an, f"{server.url}/v1/messages")
        waits = [await cancel_latency(server, p, c, h)
                 for p, c, h in [(oa, oa_chunks, 3), (an, an_chunks, 5)] * 5]
        report("cancel -> server sees the stream closed (median)", statistics.median(waits),
               target="< 1 s")
    finally:
        await aclose_shared_client()
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
