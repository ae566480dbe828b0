"""openai:MODEL against a loopback server speaking Chat Completions streaming."""

from __future__ import annotations

import pytest

from openprogram_lsp.core.errors import ProviderError
from openprogram_lsp.core.types import Message, ToolCall
from openprogram_lsp.providers.base import ModelRequest
from openprogram_lsp.providers.http import HttpSettings
from openprogram_lsp.providers.openai import OpenAIProvider

from .conftest import SECRET
from .loopback import LoopbackServer, Reply
from .run import READ_TOOL, calls_of, collect, end_of, request, text_of
from .wire import Call, OpenAIStream, fragments, rechunk


def provider(server: LoopbackServer, settings: HttpSettings, key: str = SECRET,
             ) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", base_url=f"{server.url}/v1", api_key=key,
                          settings=settings)


async def test_plain_text_streams_deltas_usage_and_request_shape(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=OpenAIStream(text=["Hel", "lo, ", "wor", "ld ✓"]).events()))
    events = await collect(provider(server, settings), request("hi there"))

    assert text_of(events) == "Hello, world ✓"
    end = end_of(events)
    assert end.stop_reason == "end_turn"
    assert (end.usage.input_tokens, end.usage.output_tokens) == (120, 15)
    assert end.usage.cache_read_tokens == 64
    [got] = server.received
    assert (got.method, got.path) == ("POST", "/v1/chat/completions")
    assert got.headers["authorization"] == f"Bearer {SECRET}"
    body = got.json
    assert body["model"] == "gpt-test"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 4096 and "max_completion_tokens" not in body
    assert body["messages"] == [{"role": "system", "content": "You are a test."},
                                {"role": "user", "content": "hi there"}]
    assert body["tools"][0] == {"type": "function", "function": {
        "name": "read_file", "description": READ_TOOL.description,
        "parameters": READ_TOOL.input_schema}}


async def test_events_split_anywhere_across_http_chunks(
        server: LoopbackServer, settings: HttpSettings) -> None:
    stream = OpenAIStream(text=["naïve ", "café ", "— done"],
                          calls=[Call("call_1", "read_file", fragments({"path": "é.txt"}, 3))])
    server.queue(Reply(chunks=rechunk(stream.events(), 7)))
    events = await collect(provider(server, settings), request())
    assert text_of(events) == "naïve café — done"
    assert calls_of(events) == [ToolCall(id="call_1", name="read_file",
                                         arguments={"path": "é.txt"})]


async def test_one_tool_call_in_many_argument_fragments(
        server: LoopbackServer, settings: HttpSettings) -> None:
    args = {"path": "src/app/main.py", "content": "print('hi')\n" * 20}
    call = Call("call_Abc123", "write_file", fragments(args, 4))
    assert len(call.fragments) > 50
    server.queue(Reply(chunks=OpenAIStream(text=["Writing."], calls=[call]).events()))
    events = await collect(provider(server, settings), request())
    assert calls_of(events) == [ToolCall(id="call_Abc123", name="write_file", arguments=args)]
    assert end_of(events).stop_reason == "tool_use"


@pytest.mark.parametrize("interleave", [False, True])
async def test_two_parallel_tool_calls_by_index(
        server: LoopbackServer, settings: HttpSettings, interleave: bool) -> None:
    a = Call("call_a", "read_file", fragments({"path": "a.txt"}, 5))
    b = Call("call_b", "read_file", fragments({"path": "b/c.txt"}, 2))
    server.queue(Reply(chunks=OpenAIStream(calls=[a, b], interleave=interleave).events()))
    events = await collect(provider(server, settings), request())
    assert [(c.id, c.arguments) for c in calls_of(events)] == [
        ("call_a", {"path": "a.txt"}), ("call_b", {"path": "b/c.txt"})]
    assert end_of(events).stop_reason == "tool_use"


async def test_finish_reasons_map_to_stop_reasons(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=OpenAIStream(text=["trunc"], finish="length").events()),
                 Reply(chunks=OpenAIStream(text=["bad"], finish="content_filter").events()))
    p = provider(server, settings)
    assert end_of(await collect(p, request())).stop_reason == "max_tokens"
    end = end_of(await collect(p, request()))
    assert end.stop_reason == "refusal" and "content filter" in (end.detail or "")


async def test_tool_result_goes_back_as_tool_message(
        server: LoopbackServer, settings: HttpSettings) -> None:
    call = Call("call_x1", "read_file", fragments({"path": "notes.md"}, 3))
    server.queue(Reply(chunks=OpenAIStream(calls=[call]).events()),
                 Reply(chunks=OpenAIStream(text=["It says hi."]).events()))
    p = provider(server, settings)
    req = request("read notes.md")
    first = await collect(p, req)
    [tc] = calls_of(first)
    messages = [*req.messages, Message(role="assistant", content="", tool_calls=[tc]),
                Message(role="tool", content="hi", tool_call_id=tc.id, name=tc.name)]
    second = await collect(p, ModelRequest(system=req.system, messages=messages,
                                           tools=req.tools))
    assert text_of(second) == "It says hi."
    sent = server.received[1].json["messages"]
    assert sent[-2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_x1", "type": "function",
         "function": {"name": "read_file", "arguments": '{"path": "notes.md"}'}}]}
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_x1", "content": "hi"}


async def test_failed_tool_result_is_marked_as_an_error(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=OpenAIStream(text=["ok"]).events()))
    tc = ToolCall(id="c1", name="read_file", arguments={"path": "x"})
    messages = [Message(role="user", content="go"),
                Message(role="assistant", content="Reading.", tool_calls=[tc]),
                Message(role="tool", content="no such file", tool_call_id="c1", is_error=True)]
    await collect(provider(server, settings),
                  ModelRequest(system="", messages=messages, tools=[]))
    sent = server.received[0].json
    assert "tools" not in sent
    assert sent["messages"][0] == {"role": "user", "content": "go"}
    assert sent["messages"][1]["content"] == "Reading."
    assert sent["messages"][2] == {"role": "tool", "tool_call_id": "c1",
                                   "content": "Error: no such file"}


async def test_no_key_means_no_authorization_header(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=OpenAIStream(text=["local"]).events()))
    await collect(provider(server, settings, key=""), request())
    assert "authorization" not in server.received[0].headers


async def test_servers_that_omit_index_and_done(
        server: LoopbackServer, settings: HttpSettings) -> None:
    # Some compatible servers send whole calls without an index and end without [DONE].
    chunks = [b'data: {"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":['
              b'{"id":"t1","type":"function","function":{"name":"read_file",'
              b'"arguments":"{\\"path\\": \\"a\\"}"}},'
              b'{"id":"t2","type":"function","function":{"name":"read_file",'
              b'"arguments":{"path":"b"}}}]},"finish_reason":"stop"}]}\n\n']
    server.queue(Reply(chunks=chunks))
    events = await collect(provider(server, settings), request())
    assert [(c.id, c.arguments) for c in calls_of(events)] == [("t1", {"path": "a"}),
                                                                ("t2", {"path": "b"})]
    assert end_of(events).stop_reason == "tool_use"


async def test_invalid_tool_arguments_are_a_clear_error(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(chunks=OpenAIStream(
        calls=[Call("c", "read_file", ['{"path": ', '"a"'])]).events()))
    with pytest.raises(ProviderError, match=r"openai: .*invalid JSON arguments.*read_file"):
        await collect(provider(server, settings), request())


async def test_official_endpoint_uses_max_completion_tokens() -> None:
    p = OpenAIProvider("gpt-4o", api_key=SECRET)
    body = p.build_body(request())
    assert body["max_completion_tokens"] == 4096 and "max_tokens" not in body
    assert SECRET not in repr(p) and SECRET not in str(vars(p).get("settings"))


async def test_server_refusing_stream_options_is_asked_again_without_it(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(status=400, body=b'{"error": {"message": "Unrecognized request '
                                        b'argument supplied: stream_options"}}'),
                 Reply(chunks=OpenAIStream(text=["ok"], usage=None).events()),
                 Reply(chunks=OpenAIStream(text=["again"], usage=None).events()))
    p = provider(server, settings)
    events = await collect(p, request())
    assert text_of(events) == "ok" and end_of(events).usage.input_tokens == 0
    await collect(p, request())
    assert "stream_options" in server.received[0].json
    assert ["stream_options" in r.json for r in server.received[1:]] == [False, False]


async def test_other_400s_are_not_asked_again(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(Reply(status=400, body=b'{"error": {"message": "bad tools"}}'))
    with pytest.raises(ProviderError, match="HTTP 400: bad tools"):
        await collect(provider(server, settings), request())
    assert len(server.received) == 1
