"""<think>…</think> left in the reply text split into thoughts, however the chunks cut it."""

from __future__ import annotations

import itertools

import pytest

from openprogram_lsp.providers.base import ThoughtDelta, ThoughtReady
from openprogram_lsp.providers.http import HttpSettings
from openprogram_lsp.providers.openai import OpenAIProvider
from openprogram_lsp.providers.think_tags import ThinkTagSplitter

from .conftest import SECRET
from .loopback import LoopbackServer, Reply
from .run import collect, request, text_of
from .wire import OpenAIStream


def split(chunks: list[str]) -> tuple[str, str]:
    s = ThinkTagSplitter()
    pieces = [p for c in chunks for p in s.feed(c)] + s.flush()
    return ("".join(t for thought, t in pieces if thought),
            "".join(t for thought, t in pieces if not thought))


@pytest.mark.parametrize("text, thought, reply", [
    ("<think>\nplan it\n</think>\n\nThe answer.", "\nplan it\n", "The answer."),
    ("  <think>a</think>b", "a", "b"),
    ("No tags <think>here</think>.", "", "No tags <think>here</think>."),
    ("<think>never closed", "never closed", ""),
    ("<thin", "", "<thin"),
    ("", "", ""),
])
def test_every_cut_gives_the_same_split(text: str, thought: str, reply: str) -> None:
    assert split([text]) == (thought, reply)
    for a, b in itertools.combinations(range(len(text) + 1), 2):
        assert split([text[:a], text[a:b], text[b:]]) == (thought, reply), (a, b)


async def test_a_reasoning_model_s_think_block_streams_as_thoughts(
        server: LoopbackServer, settings: HttpSettings) -> None:
    pieces = ["<thi", "nk>\nThe user", " greets me.\n</th", "ink>\n\nHello", "!"]
    server.queue(Reply(chunks=OpenAIStream(model="qwen3:8b", text=pieces).events()),
                 Reply(chunks=OpenAIStream(model="gpt-4o", text=pieces).events()))
    qwen = OpenAIProvider("qwen3:8b", base_url=f"{server.url}/v1", api_key=SECRET,
                          settings=settings)
    events = await collect(qwen, request())
    assert text_of(events) == "Hello!"
    assert "".join(e.text for e in events if isinstance(e, ThoughtDelta)) == (
        "\nThe user greets me.\n")
    [ready] = [e.thought for e in events if isinstance(e, ThoughtReady)]
    assert ready.text == "\nThe user greets me.\n" and ready.model == "qwen3:8b"
    plain = OpenAIProvider("gpt-4o", base_url=f"{server.url}/v1", api_key=SECRET,
                           settings=settings)  # a model that does not reason keeps the text
    assert text_of(await collect(plain, request())) == "".join(pieces)
