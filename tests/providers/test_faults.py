"""Faults, for both APIs: retries, broken streams, malformed data, auth failures, cancel."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from openprogram_lsp.core.errors import ProviderError
from openprogram_lsp.providers.anthropic import AnthropicProvider
from openprogram_lsp.providers.base import Provider, ProviderEvent, StreamEnd, TextDelta
from openprogram_lsp.providers.http import HttpSettings
from openprogram_lsp.providers.openai import OpenAIProvider

from .conftest import SECRET, SleepRecorder
from .loopback import LoopbackServer, Reply
from .run import collect, end_of, request, text_of
from .wire import AnthropicStream, OpenAIStream, anthropic_error, openai_error


@dataclass
class Api:
    """One wire format: how to build its provider, a text stream and an error body."""

    name: str
    key_env: str
    make: Callable[[str, HttpSettings, str], Provider]
    stream: Callable[[list[str]], list[bytes]]
    error: Callable[[str, str], bytes]
    head: int  # how many leading events of ``stream`` reach the first text delta


APIS = [
    Api("openai", "OPENAI_API_KEY",
        lambda url, s, key: OpenAIProvider("gpt-test", base_url=f"{url}/v1", api_key=key,
                                           settings=s),
        lambda text: OpenAIStream(text=text).events(), openai_error, 2),
    Api("anthropic", "ANTHROPIC_API_KEY",
        lambda url, s, key: AnthropicProvider("claude-test", base_url=url, api_key=key,
                                              settings=s),
        lambda text: AnthropicStream(text=text).events(), anthropic_error, 4),
]


@pytest.fixture(params=APIS, ids=[a.name for a in APIS])
def api(request: pytest.FixtureRequest) -> Api:
    """Each wire format in turn."""
    return request.param  # type: ignore[no-any-return]


def make(api: Api, server: LoopbackServer, settings: HttpSettings,
         key: str = SECRET) -> Provider:
    return api.make(server.url, settings, key)


async def test_429_with_retry_after_then_success(
        api: Api, server: LoopbackServer, settings: HttpSettings, sleeps: SleepRecorder) -> None:
    server.queue(Reply(status=429, headers=[("retry-after", "2")],
                       body=api.error("Rate limit reached", "rate_limit_error")),
                 Reply(chunks=api.stream(["fine"])))
    events = await collect(make(api, server, settings), request())
    assert text_of(events) == "fine"
    assert sleeps.waits == [2.0]
    assert len(server.received) == 2
    assert server.received[0].json == server.received[1].json


async def test_500_twice_then_success_with_jittered_backoff(
        api: Api, server: LoopbackServer, settings: HttpSettings, sleeps: SleepRecorder) -> None:
    err = Reply(status=500, body=api.error("The server had an error", "api_error"))
    server.queue(err, err, Reply(chunks=api.stream(["recovered"])))
    events = await collect(make(api, server, settings), request())
    assert text_of(events) == "recovered"
    assert len(server.received) == 3
    first, second = sleeps.waits
    assert 0.25 <= first <= 0.5 and 0.5 <= second <= 1.0


async def test_retries_are_bounded_in_count(
        api: Api, server: LoopbackServer, settings: HttpSettings, sleeps: SleepRecorder) -> None:
    server.queue(*[Reply(status=503, body=b"upstream unavailable")] * 10)
    with pytest.raises(ProviderError, match=rf"{api.name}: HTTP 503.*gave up after 4 attempts"):
        await collect(make(api, server, settings), request())
    assert len(server.received) == 4 and len(sleeps.waits) == 3


async def test_retries_are_bounded_in_time(
        api: Api, server: LoopbackServer, settings: HttpSettings, sleeps: SleepRecorder) -> None:
    server.queue(Reply(status=429, headers=[("retry-after", "3600")], body=b"{}"))
    with pytest.raises(ProviderError, match="retry budget") as info:
        await collect(make(api, server, settings), request())
    assert sleeps.waits == [] and info.value.status == 429 and info.value.retry_after == 3600


async def test_should_retry_header_overrides(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(status=500, headers=[("x-should-retry", "false")], body=b"{}"),
                 Reply(status=409, headers=[("x-should-retry", "true")], body=b"{}"))
    with pytest.raises(ProviderError, match="HTTP 500"):
        await collect(make(api, server, settings), request())
    assert len(server.received) == 1


async def test_disconnect_mid_stream_keeps_the_partial_text(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    chunks = api.stream(["The first ", "half", " and the rest"])
    server.queue(Reply(chunks=chunks[:api.head + 1], cut=True))
    got: list[ProviderEvent] = []
    with pytest.raises(ProviderError, match=rf"{api.name}: .*(broke mid-way|ended before)"):
        await collect(make(api, server, settings), request(), got)
    assert text_of(got).startswith("The first")
    assert not any(isinstance(e, StreamEnd) for e in got)
    assert len(server.received) == 1  # text was delivered: not retried


async def test_disconnect_before_any_output_is_retried(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=[], cut=True), Reply(chunks=api.stream(["second try"])))
    assert text_of(await collect(make(api, server, settings), request())) == "second try"
    assert len(server.received) == 2


async def test_stream_ending_early_without_error_is_reported(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    chunks = api.stream(["only this"])
    server.queue(Reply(chunks=chunks[:api.head]))  # a clean end, but before the final events
    got: list[ProviderEvent] = []
    with pytest.raises(ProviderError, match="ended before the response was complete"):
        await collect(make(api, server, settings), request(), got)
    assert text_of(got) == "only this"


@pytest.mark.parametrize("line, message", [
    (b"<html><body>502 Bad Gateway</body></html>\n\n", "malformed stream: unexpected line"),
    (b'data: {"type": "content_block_delta", "choices": [\n\n', "malformed JSON"),
    (b"data: \xff\xfe\n\n", "malformed stream: a line that is not UTF-8"),
])
async def test_malformed_stream_is_a_clear_error(
        api: Api, server: LoopbackServer, settings: HttpSettings, line: bytes,
        message: str) -> None:
    chunks = api.stream(["before "])
    server.queue(Reply(chunks=[*chunks[:api.head], line, *chunks[api.head:]]))
    with pytest.raises(ProviderError, match=rf"^{api.name}: {message}"):
        await collect(make(api, server, settings), request())
    assert len(server.received) == 1


async def test_401_says_to_check_the_key_and_never_shows_it(
        api: Api, server: LoopbackServer, settings: HttpSettings,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server.queue(Reply(status=401, body=api.error(
        f"Incorrect API key provided: {SECRET}", "authentication_error")))
    with pytest.raises(ProviderError) as info:
        await collect(make(api, server, settings), request())
    msg = str(info.value)
    assert msg.startswith(f"{api.name}: authentication failed (HTTP 401): check {api.key_env}")
    assert "Incorrect API key provided" in msg
    assert SECRET not in msg and SECRET[8:] not in msg
    assert SECRET not in caplog.text
    assert len(server.received) == 1 and info.value.status == 401


async def test_403_without_a_key_says_to_set_it(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(status=403, body=b"forbidden"))
    with pytest.raises(ProviderError, match=rf"{api.key_env} is not set"):
        await collect(make(api, server, settings, key=""), request())


async def test_400_is_not_retried_and_shows_the_server_message(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(status=400, body=api.error("messages: field required",
                                                  "invalid_request_error")))
    with pytest.raises(ProviderError, match="HTTP 400: messages: field required"):
        await collect(make(api, server, settings), request())
    assert len(server.received) == 1


async def test_connection_refused_is_retried_then_reported(
        api: Api, settings: HttpSettings, sleeps: SleepRecorder) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = api.make(f"http://127.0.0.1:{port}", settings, SECRET)
    with pytest.raises(ProviderError, match=rf"{api.name}: cannot connect to http://127"):
        await collect(p, request())
    assert len(sleeps.waits) == settings.max_retries


async def test_read_timeout(api: Api, server: LoopbackServer) -> None:
    settings = HttpSettings(read_timeout=0.2, max_retries=0)
    server.queue(Reply(chunks=api.stream(["slow"])[:api.head - 1], hold=True))
    with pytest.raises(ProviderError, match=r"read timeout"):
        await collect(make(api, server, settings), request())


async def test_cancel_event_closes_the_stream(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=api.stream(["thinking ", "more"])[:api.head + 1], hold=True))
    cancel = asyncio.Event()
    events: list[ProviderEvent] = []
    async for ev in make(api, server, settings).stream(request(cancel=cancel)):
        events.append(ev)
        if isinstance(ev, TextDelta):
            cancel.set()
    assert text_of(events) == "thinking "
    assert end_of(events).stop_reason == "cancelled"
    assert await asyncio.to_thread(server.client_left.wait, 10)


async def test_task_cancellation_closes_the_stream(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=api.stream(["partial"])[:api.head], hold=True))
    got: list[ProviderEvent] = []
    task = asyncio.create_task(collect(make(api, server, settings), request(), got))
    while not got:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(server.client_left.wait, 10)


async def test_cancel_before_start_sends_nothing(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    cancel = asyncio.Event()
    cancel.set()
    events = await collect(make(api, server, settings), request(cancel=cancel))
    assert end_of(events).stop_reason == "cancelled" and server.received == []


async def test_one_keep_alive_connection_for_consecutive_calls(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=api.stream(["one"])), Reply(chunks=api.stream(["two"])))
    p = make(api, server, settings)
    assert text_of(await collect(p, request())) == "one"
    assert text_of(await collect(p, request())) == "two"
    assert [r.connection for r in server.received] == [1, 1]


async def test_redirect_is_an_error_naming_the_base_url_variable(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(status=301, headers=[("location", "https://elsewhere.example/v1")],
                       body=b""))
    with pytest.raises(ProviderError, match=r"HTTP 301 \(redirected to https://elsewhere"
                                            r"\.example/v1; check [A-Z]+_BASE_URL\)"):
        await collect(make(api, server, settings), request())


async def test_json_instead_of_a_stream_is_a_clear_error(
        api: Api, server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(body=api.error("streaming is not supported", "invalid_request_error")))
    with pytest.raises(ProviderError, match="JSON instead of an event stream: streaming is not"):
        await collect(make(api, server, settings), request())
    assert len(server.received) == 1


async def test_credentials_in_the_base_url_stay_out_of_messages(
        api: Api, settings: HttpSettings) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    quick = HttpSettings(max_retries=0)
    p = api.make(f"http://user:hunter2@127.0.0.1:{port}", quick, SECRET)
    with pytest.raises(ProviderError, match="cannot connect") as info:
        await collect(p, request())
    assert "hunter2" not in str(info.value)
