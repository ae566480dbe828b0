"""anthropic:MODEL against a loopback server speaking the Messages streaming format."""

from __future__ import annotations

import pytest

from openprogram_lsp.core.errors import ProviderError
from openprogram_lsp.core.types import Message, ToolCall
from openprogram_lsp.providers.anthropic import AnthropicProvider, encode_messages
from openprogram_lsp.providers.base import ModelRequest
from openprogram_lsp.providers.http import HttpSettings

from .conftest import SECRET
from .loopback import LoopbackServer, Reply
from .run import READ_TOOL, WRITE_TOOL, calls_of, collect, end_of, request, text_of
from .wire import AnthropicStream, Call, fragments, rechunk, sse

EPHEMERAL = {"type": "ephemeral"}


def provider(server: LoopbackServer, settings: HttpSettings, key: str = SECRET,
             ) -> AnthropicProvider:
    return AnthropicProvider("claude-test", base_url=server.url, api_key=key,
                             settings=settings)


async def test_plain_text_usage_headers_and_cache_marks(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=AnthropicStream(text=["Hel", "lo ", "✓"]).events()))
    events = await collect(provider(server, settings), request("hi"))

    assert text_of(events) == "Hello ✓"
    end = end_of(events)
    assert end.stop_reason == "end_turn"
    assert end.usage.input_tokens == 472 + 1800
    assert (end.usage.output_tokens, end.usage.cache_read_tokens,
            end.usage.cache_write_tokens) == (89, 1800, 0)
    [got] = server.received
    assert (got.method, got.path) == ("POST", "/v1/messages")
    assert got.headers["x-api-key"] == SECRET
    assert got.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in got.headers
    body = got.json
    assert (body["model"], body["max_tokens"], body["stream"]) == ("claude-test", 4096, True)
    assert body["system"] == [{"type": "text", "text": "You are a test.",
                               "cache_control": EPHEMERAL}]
    assert body["tools"][0] == {"name": "read_file", "description": READ_TOOL.description,
                                "input_schema": READ_TOOL.input_schema}
    assert body["tools"][-1]["cache_control"] == EPHEMERAL
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "hi", "cache_control": EPHEMERAL}]}]


async def test_tool_use_in_many_input_json_fragments(
        server: LoopbackServer, settings: HttpSettings) -> None:
    args = {"path": "pkg/mod.py", "content": "x = 1\n" * 30}
    call = Call("toolu_01A09q90qw90lq917835lq9", "write_file", fragments(args, 3))
    stream = AnthropicStream(text=["Let me write it."], calls=[call])
    server.queue(Reply(chunks=rechunk(stream.events(), 11)))
    events = await collect(provider(server, settings), request())
    assert text_of(events) == "Let me write it."
    assert calls_of(events) == [ToolCall(id=call.id, name="write_file", arguments=args)]
    assert end_of(events).stop_reason == "tool_use"


async def test_two_parallel_tool_uses(server: LoopbackServer, settings: HttpSettings) -> None:
    a = Call("toolu_a", "read_file", fragments({"path": "a"}, 2))
    b = Call("toolu_b", "read_file", [])  # no fragments: the input from content_block_start
    server.queue(Reply(chunks=AnthropicStream(calls=[a, b]).events()))
    events = await collect(provider(server, settings), request())
    assert [(c.id, c.arguments) for c in calls_of(events)] == [("toolu_a", {"path": "a"}),
                                                                ("toolu_b", {})]


async def test_tool_results_go_back_as_tool_result_blocks(
        server: LoopbackServer, settings: HttpSettings) -> None:
    a = Call("toolu_a", "read_file", fragments({"path": "a"}, 2))
    b = Call("toolu_b", "read_file", fragments({"path": "b"}, 2))
    server.queue(Reply(chunks=AnthropicStream(text=["Reading both."], calls=[a, b]).events()),
                 Reply(chunks=AnthropicStream(text=["Both read."]).events()))
    p = provider(server, settings)
    req = request("read a and b")
    first = await collect(p, req)
    ca, cb = calls_of(first)
    messages = [*req.messages,
                Message(role="assistant", content=text_of(first), tool_calls=[ca, cb]),
                Message(role="tool", content="A!", tool_call_id=ca.id),
                Message(role="tool", content="no such file", tool_call_id=cb.id, is_error=True)]
    await collect(p, ModelRequest(system=req.system, messages=messages, tools=req.tools))
    sent = server.received[1].json["messages"]
    assert sent[1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Reading both."},
        {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a"}},
        {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "b"}}]}
    assert sent[2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A!"},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "no such file",
         "is_error": True, "cache_control": EPHEMERAL}]}
    # The prompt of the previous call stays marked, so its cached prefix is found again.
    assert sent[0]["content"][-1]["cache_control"] == EPHEMERAL
    marks = sum("cache_control" in blk for m in sent for blk in m["content"])
    assert marks == 2


def test_message_encoding_merges_turns_and_lifts_system_messages() -> None:
    tc = ToolCall(id="t1", name="read_file", arguments={})
    extra, turns = encode_messages([
        Message(role="system", content="Be brief."),
        Message(role="user", content="one"),
        Message(role="user", content="two"),
        Message(role="assistant", content="", tool_calls=[tc]),
        Message(role="tool", content="", tool_call_id="t1"),
        Message(role="user", content="steer"),
        Message(role="assistant", content="   "),
    ])
    assert extra == "Be brief."
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert [b["text"] for b in turns[0]["content"]] == ["one", "two"]
    assert turns[1]["content"] == [{"type": "tool_use", "id": "t1", "name": "read_file",
                                    "input": {}}]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "(no output)"},
        {"type": "text", "text": "steer"}]


def test_cache_breakpoints_never_exceed_four() -> None:
    p = AnthropicProvider("claude-x", api_key="k")
    tc = ToolCall(id="t", name="read_file", arguments={})
    msgs = [Message(role="user", content="a"), Message(role="assistant", content="b"),
            Message(role="user", content="c"),
            Message(role="assistant", content="", tool_calls=[tc]),
            Message(role="tool", content="r", tool_call_id="t")]
    body = p.build_body(ModelRequest(system="sys", messages=msgs, tools=[READ_TOOL, WRITE_TOOL]))
    blocks = [*body["system"], *body["tools"], *(b for m in body["messages"]
                                                 for b in m["content"])]
    assert sum("cache_control" in b for b in blocks) == 4
    assert "cache_control" in body["messages"][2]["content"][-1]
    assert "cache_control" in body["messages"][4]["content"][-1]


async def test_ping_and_unknown_events_are_ignored(
        server: LoopbackServer, settings: HttpSettings) -> None:
    events = AnthropicStream(text=["ok"]).events()
    events.insert(2, sse({"type": "ping"}, "ping"))
    events.insert(3, sse({"type": "some_future_event", "x": 1}, "some_future_event"))
    events.insert(1, b": keep-alive comment\n\n")
    server.queue(Reply(chunks=events))
    assert text_of(await collect(provider(server, settings), request())) == "ok"


async def test_error_event_after_text_ends_the_stream_with_the_text_kept(
        server: LoopbackServer, settings: HttpSettings) -> None:
    events = AnthropicStream(text=["partial ", "answer"]).events()[:5]
    events.append(sse({"type": "error", "error": {"type": "overloaded_error",
                                                  "message": "Overloaded"}}, "error"))
    server.queue(Reply(chunks=events))
    got: list[object] = []
    with pytest.raises(ProviderError, match=r"anthropic: .*Overloaded"):
        await collect(provider(server, settings), request(), got)  # type: ignore[arg-type]
    assert text_of(got) == "partial answer"  # type: ignore[arg-type]
    assert len(server.received) == 1  # no retry once text was delivered


async def test_error_event_before_any_output_is_retried(
        server: LoopbackServer, settings: HttpSettings) -> None:
    overloaded = [AnthropicStream().events()[0],
                  sse({"type": "error", "error": {"type": "overloaded_error",
                                                  "message": "Overloaded"}}, "error")]
    server.queue(Reply(chunks=overloaded), Reply(chunks=AnthropicStream(text=["ok"]).events()))
    assert text_of(await collect(provider(server, settings), request())) == "ok"
    assert len(server.received) == 2


async def test_base_url_with_v1_suffix(server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=AnthropicStream(text=["ok"]).events()))
    p = AnthropicProvider("claude-test", base_url=f"{server.url}/v1/", settings=settings)
    await collect(p, request())
    assert server.received[0].path == "/v1/messages"
    assert "x-api-key" not in server.received[0].headers


async def test_refusal_is_a_stop_not_an_error(server: LoopbackServer,
                                              settings: HttpSettings) -> None:
    server.queue(Reply(chunks=AnthropicStream(text=["I can't"], stop="refusal").events()))
    events = await collect(provider(server, settings), request())
    assert text_of(events) == "I can't"
    assert end_of(events).stop_reason == "refusal"
