"""Streaming a 5,000-chunk response through the provider layer vs a bare httpx stream.

Same run, same loopback server (the tests' h11 server, here in a child process so it shares no
GIL with the client), same bytes: the provider figure (SSE parsing, JSON decoding, events through
the async generator) beside a bare ``httpx`` stream reading the same response line by line
(target ratio <= 1.5), as wall time and as the client thread's CPU time, and beside reading it as
raw bytes for reference. Also the time from setting the cancel event to the server seeing the
connection closed (target < 1 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from multiprocessing.connection import Connection
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
ROUNDS = max(7, int(os.environ.get("BENCH_ROUNDS", "9")))  # a median of 7 pairs at least
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


def _serve(api: str, copies: int, conn: Connection) -> None:
    """Child process: a loopback server replaying one API's stream ``copies`` times."""
    events = (OpenAIStream(text=TOKENS) if api == "openai" else AnthropicStream(text=TOKENS)
              ).events()
    server = LoopbackServer().start()
    server.queue(*[Reply(chunks=events) for _ in range(copies)])
    conn.send(server.port)
    with contextlib.suppress(EOFError):
        conn.recv()  # until the parent hangs up
    server.stop()


@contextlib.contextmanager
def child_server(api: str, copies: int) -> Iterator[str]:
    """The base URL of a loopback server in a child process (no GIL shared with the client)."""
    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=_serve, args=(api, copies, child), daemon=True)
    proc.start()
    try:
        yield f"http://127.0.0.1:{parent.recv()}"
    finally:
        parent.close()
        proc.join(10)


async def timed(fn: Callable[[], Awaitable[int]]) -> tuple[float, float]:
    """Wall seconds and this thread's CPU seconds for one streamed response."""
    t0, c0 = time.perf_counter(), time.thread_time()
    await fn()
    return time.perf_counter() - t0, time.thread_time() - c0


async def compare(api: str, make: Callable[[str], Provider], path: str) -> None:
    """Interleave the three readers over several rounds against one server; report medians."""
    with child_server(api, 3 * (ROUNDS + 1)) as url:
        provider = make(url)
        readers = {"provider": lambda: through_provider(provider),
                   "lines": lambda: bare_lines(url + path),
                   "bytes": lambda: bare_bytes(url + path)}
        got: dict[str, list[tuple[float, float]]] = {k: [] for k in readers}
        for i in range(ROUNDS + 1):
            for name, fn in readers.items():
                figure = await timed(fn)
                if i:  # the first round warms up
                    got[name].append(figure)

    def med(name: str, which: int) -> float:
        return statistics.median(x[which] for x in got[name])

    report(f"{api}: {CHUNKS} chunks via provider (wall)", med("provider", 0), med("lines", 0),
           target="ratio <= 1.5")
    report(f"{api}: same, client CPU", med("provider", 1), med("lines", 1))
    report(f"{api}: bare aiter_bytes (reference, wall)", med("bytes", 0), med("lines", 0))


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
    settings = HttpSettings(max_retries=0)
    oa_chunks = OpenAIStream(text=TOKENS).events()
    an_chunks = AnthropicStream(text=TOKENS).events()
    print(f"openai stream: {sum(map(len, oa_chunks)):,} bytes in {len(oa_chunks):,} HTTP "
          f"chunks; anthropic: {sum(map(len, an_chunks)):,} bytes in {len(an_chunks):,}; "
          "baseline: a bare httpx stream reading the same response line by line", flush=True)
    try:
        server = LoopbackServer().start()
        try:
            oa = OpenAIProvider("bench", base_url=f"{server.url}/v1", settings=settings)
            an = AnthropicProvider("bench", base_url=server.url, settings=settings)
            cases: list[tuple[Provider, list[bytes], int]] = [(oa, oa_chunks, 3),
                                                              (an, an_chunks, 5)]
            waits = [await cancel_latency(server, p, c, h) for p, c, h in cases * 5]
        finally:
            server.stop()
        report("cancel -> server sees the stream closed (median)", statistics.median(waits),
               target="< 1 s")
        await compare("openai", lambda url: OpenAIProvider(
            "bench", base_url=f"{url}/v1", settings=settings), "/v1/chat/completions")
        await compare("anthropic", lambda url: AnthropicProvider(
            "bench", base_url=url, settings=settings), "/v1/messages")
    finally:
        await aclose_shared_client()


if __name__ == "__main__":
    asyncio.run(main())
