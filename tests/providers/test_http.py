"""SSE parsing, Retry-After, backoff bounds and key redaction."""

from __future__ import annotations

import asyncio
import email.utils
import itertools
import time

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprogram_lsp.config import load_settings
from openprogram_lsp.config.sections.http import HttpSection
from openprogram_lsp.core.errors import ConfigError, ProviderError
from openprogram_lsp.providers.http import (
    HttpSettings,
    SSEParser,
    aclose_shared_client,
    parse_retry_after,
    redact,
    shared_client,
)

STREAM = (b"event: message_start\ndata: {\"a\": 1}\n\n"
          b": a comment\n"
          b"id: 7\nretry: 1000\n"
          b"data: first line\r\ndata:second line\r\n\r\n"
          b"event: ping\ndata: {\"type\": \"ping\"}\n\n"
          b"data: caf\xc3\xa9 \xe2\x9c\x93\n\n")
EXPECTED = [("message_start", '{"a": 1}'), ("message", "first line\nsecond line"),
            ("ping", '{"type": "ping"}'), ("message", "café ✓")]


def parse(chunks: list[bytes]) -> list[tuple[str, str]]:
    parser = SSEParser("test")
    out = [ev for c in chunks for ev in parser.feed(c)]
    parser.close()
    return out


def test_sse_fields_comments_and_crlf() -> None:
    assert parse([STREAM]) == EXPECTED


@given(st.lists(st.integers(min_value=1, max_value=len(STREAM) - 1), max_size=12))
def test_sse_any_split_of_the_bytes_gives_the_same_events(cuts: list[int]) -> None:
    points = [0, *sorted(set(cuts)), len(STREAM)]
    assert parse([STREAM[a:b] for a, b in itertools.pairwise(points)]) == EXPECTED


_FIELD = st.text(st.characters(exclude_characters="\r\n", exclude_categories=["Cs"]),
                 max_size=12)


@given(st.lists(st.tuples(st.sampled_from(["", "message_start", "ping"]),
                          st.lists(_FIELD, max_size=3)), max_size=8))
def test_sse_one_event_per_chunk_matches_the_whole_stream(
        events: list[tuple[str, list[str]]]) -> None:
    chunks = [((f"event: {name}\n" if name else "")
               + "".join(f"data: {d}\n" for d in datas) + "\n").encode()
              for name, datas in events]
    expected = [(name or "message", "\n".join(datas)) for name, datas in events if datas]
    assert parse(chunks) == expected
    assert parse([b"".join(chunks)]) == expected


def test_sse_incomplete_trailing_event_is_dropped() -> None:
    assert parse([b"data: done\n\ndata: half"]) == [("message", "done")]


def test_sse_unknown_field_is_malformed() -> None:
    with pytest.raises(ProviderError, match=r"^test: malformed stream: unexpected line"):
        parse([b'{"error": "boom"}\n'])


def test_retry_after_forms() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    assert parse_retry_after(httpx.Headers({"retry-after": "1.5",
                                            "retry-after-ms": "250"})) == 0.25
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    got = parse_retry_after(httpx.Headers({"retry-after": date}))
    assert got is not None and 25 <= got <= 31
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers()) is None


def test_backoff_grows_is_jittered_and_capped() -> None:
    s = HttpSettings(backoff_base=1.0, backoff_cap=8.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        waits = {s.backoff(attempt, None) for _ in range(50)}
        assert all(ceiling / 2 <= w <= ceiling for w in waits) and len(waits) > 1
    assert s.backoff(1, 7.0) == 7.0


def test_settings_from_env() -> None:
    def http(env: dict[str, str]) -> HttpSettings:
        return HttpSettings.from_config(load_settings(env=env, user_file=False).get(HttpSection))

    s = http({"OPENPROGRAM_HTTP_READ_TIMEOUT": "30", "OPENPROGRAM_MAX_RETRIES": "0"})
    assert (s.read_timeout, s.max_retries, s.connect_timeout) == (30.0, 0, 10.0)
    with pytest.raises(ConfigError, match="OPENPROGRAM_HTTP_CONNECT_TIMEOUT"):
        http({"OPENPROGRAM_HTTP_CONNECT_TIMEOUT": "fast"})


def test_redact_removes_held_keys_and_key_shapes() -> None:
    text = redact("bad key sk-proj-abcdefghijklmnop and mysecretvalue", ("mysecretvalue",))
    assert "abcdefghijklmnop" not in text and "mysecretvalue" not in text


async def test_one_shared_client_per_loop_closed_on_request() -> None:
    first = await shared_client()
    assert await shared_client() is first
    await aclose_shared_client()
    assert first.is_closed
    assert await shared_client() is not first


def test_a_loop_ending_without_explicit_close_closes_its_client() -> None:
    async def grab() -> httpx.AsyncClient:
        return await shared_client()

    client = asyncio.run(grab())
    assert client.is_closed
