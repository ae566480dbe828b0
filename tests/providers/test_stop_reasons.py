"""Every way a model stops, replayed byte for byte from recorded and documented streams
(``streams/``) over loopback: at the provider, and through whole turns of the dispatcher."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from openprogram_lsp.providers.anthropic import AnthropicProvider
from openprogram_lsp.providers.base import ToolCallCut
from openprogram_lsp.providers.http import HttpSettings
from openprogram_lsp.providers.openai import OpenAIProvider

from .conftest import SECRET
from .loopback import LoopbackServer, Reply
from .run import calls_of, collect, end_of, request, text_of
from .wire import AnthropicStream, OpenAIStream

STREAMS = Path(__file__).parent / "streams"


def recorded(name: str) -> Reply:
    """A stream file served as it is, split where the service flushes (after each event)."""
    data = (STREAMS / name).read_bytes()
    parts = [p + b"\n\n" for p in data.split(b"\n\n") if p]
    assert b"".join(parts) == data
    return Reply(chunks=parts)


def openai(server: LoopbackServer, settings: HttpSettings) -> OpenAIProvider:
    return OpenAIProvider("gpt-test", base_url=f"{server.url}/v1", api_key=SECRET,
                          settings=settings)


def anthropic(server: LoopbackServer, settings: HttpSettings) -> AnthropicProvider:
    return AnthropicProvider("claude-test", base_url=server.url, api_key=SECRET,
                             settings=settings)


# -- at the provider --------------------------------------------------------------------------

async def test_openai_length_keeps_the_text_and_says_max_tokens(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(recorded("openai_length.sse"))
    events = await collect(openai(server, settings), request())
    assert text_of(events) == '{"'
    assert end_of(events).stop_reason == "max_tokens"


async def test_openai_length_inside_a_tool_call_reports_the_cut_call(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(recorded("openai_length_in_tool_call.sse"))
    events = await collect(openai(server, settings), request())
    assert calls_of(events) == []
    [cut] = [e for e in events if isinstance(e, ToolCallCut)]
    assert (cut.id, cut.name) == ("call_3kXPz4bcqgTbHJvY0t8z6wRd", "write_file")
    assert cut.partial == '{"path":"notes.txt","content":"# Notes\\n\\nFirst'
    assert end_of(events).stop_reason == "max_tokens"


async def test_openai_delta_refusal_is_the_reply_and_the_stop_is_refusal(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(recorded("openai_refusal.sse"))
    events = await collect(openai(server, settings), request())
    assert text_of(events) == "I'm sorry, but I can't assist with that request."
    end = end_of(events)
    assert end.stop_reason == "refusal"
    assert (end.usage.input_tokens, end.usage.output_tokens) == (17, 12)


async def test_openai_content_filter_is_a_refusal_saying_so(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(recorded("openai_content_filter.sse"))
    events = await collect(openai(server, settings), request())
    end = end_of(events)
    assert (end.stop_reason, end.detail) == ("refusal", "the server's content filter stopped "
                                                         "the response")


async def test_anthropic_max_tokens_mid_tool_use_keeps_text_and_reports_the_call(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(recorded("anthropic_max_tokens_in_tool_use.sse"))
    events = await collect(anthropic(server, settings), request())
    assert text_of(events) == ("I'll create a comprehensive tax guide for someone with multiple "
                               "W2s and save it in a file called taxes.txt. Let me do that for "
                               "you now.")
    assert calls_of(events) == []
    [cut] = [e for e in events if isinstance(e, ToolCallCut)]
    assert (cut.id, cut.name) == ("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file")
    assert cut.partial.startswith('{"filename": "taxes.txt", "lines_of_text": [')
    assert cut.partial.endswith('\n"Filing taxes')
    end = end_of(events)
    assert end.stop_reason == "max_tokens"
    assert (end.usage.input_tokens, end.usage.output_tokens) == (450, 124)


async def test_anthropic_refusal_carries_the_explanation(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(recorded("anthropic_refusal.sse"))
    events = await collect(anthropic(server, settings), request())
    end = end_of(events)
    assert (end.stop_reason, end.detail) == ("refusal", "This request was refused due to "
                                                        "policy.")


async def test_anthropic_tool_json_broken_without_the_limit_is_still_an_error(
        server: LoopbackServer, settings: HttpSettings) -> None:
    from openprogram_lsp.core.errors import ProviderError

    from .wire import Call
    server.queue(Reply(chunks=AnthropicStream(calls=[Call("toolu_x", "read_file",
                                                          ['{"path": '])]).events()))
    with pytest.raises(ProviderError, match="invalid JSON arguments"):
        await collect(anthropic(server, settings), request())


# -- through whole turns ----------------------------------------------------------------------

@pytest.fixture
def anthropic_env(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return "anthropic:claude-test"


@pytest.fixture
def openai_env(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return "openai:gpt-test"


async def test_a_tool_call_cut_by_max_tokens_ends_truncated_and_continue_tells_the_model(
        anthropic_env: str, server: LoopbackServer, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    server.queue(recorded("anthropic_max_tokens_in_tool_use.sse"),
                 Reply(chunks=AnthropicStream(text=["Writing it in parts."]).events()))
    dispatcher = make_dispatcher(anthropic_env, permission_mode="bypass")
    seen: list[Event] = []
    first = await dispatcher.run_turn(TurnRequest(text="write my tax guide",
                                                  workspace=str(workspace)),
                                      on_event=seen.append)
    assert first.status == "truncated", first.error
    assert first.text.endswith("Let me do that for you now.")
    [warning] = first.warnings or []
    assert "output limit" in warning and "cut" in warning and "continue" in warning
    assert not (workspace / "taxes.txt").exists()
    # the user sees the cut call as a failed card, live and in the stored turn
    finished = [e for e in seen if e.type == "tool.finished"]
    assert [e.payload["status"] for e in finished] == ["failed"]
    assert "output limit" in finished[0].payload["output"]
    done = [e for e in seen if e.type == "turn.finished"]
    assert done[-1].payload["status"] == "truncated"
    node = dispatcher.services.store.get_node(first.session_id, first.assistant_node_id)
    assert node.status == "done" and node.metadata["stop"] == "max_tokens"
    assert node.metadata["warnings"] == [warning]
    [record] = node.tool_calls or []
    assert (record.name, record.status, record.input) == ("make_file", "failed", {})

    second = await dispatcher.run_turn(TurnRequest(text="continue", session_id=first.session_id,
                                                   workspace=str(workspace)))
    assert second.status == "done", second.error
    sent = server.received[1].json["messages"]
    assistant, results = sent[1], sent[2]
    assert assistant["role"] == "assistant"
    assert assistant["content"][-1]["type"] == "tool_use"
    assert assistant["content"][-1]["name"] == "make_file"
    result = results["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "output limit" in result["content"] and "[reply cut" in result["content"]
    assert results["content"][-1]["text"] == "continue"


async def test_length_ends_the_turn_truncated_with_a_warning(
        openai_env: str, server: LoopbackServer, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    server.queue(recorded("openai_length.sse"),
                 Reply(chunks=OpenAIStream(text=['"city": "Paris"}']).events()))
    dispatcher = make_dispatcher(openai_env)
    first = await dispatcher.run_turn(TurnRequest(text="as JSON", workspace=str(workspace)))
    assert (first.status, first.text) == ("truncated", '{"')
    assert first.warnings and "output limit" in first.warnings[0]
    second = await dispatcher.run_turn(TurnRequest(text="continue", session_id=first.session_id,
                                                   workspace=str(workspace)))
    assert second.status == "done"
    told = server.received[1].json["messages"]
    assert told[-2] == {"role": "assistant",
                        "content": '{"\n[reply cut: the output limit was reached]'}
    assert told[-1] == {"role": "user", "content": "continue"}


async def test_the_context_window_running_out_ends_truncated_too(
        anthropic_env: str, server: LoopbackServer, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    """Sonnet 4.5 and later stop with ``model_context_window_exceeded`` when the window, not
    max_tokens, ends the reply: the same cut, the user told what filled up."""
    server.queue(Reply(chunks=AnthropicStream(text=["The first half"],
                                              stop="model_context_window_exceeded").events()))
    result = await make_dispatcher(anthropic_env).run_turn(
        TurnRequest(text="go", workspace=str(workspace)))
    assert (result.status, result.text) == ("truncated", "The first half")
    [warning] = result.warnings or []
    assert "filled the model's context window" in warning and "/compact" in warning


@pytest.mark.parametrize(("stream", "text", "why"), [
    ("openai_refusal.sse", "I'm sorry, but I can't assist with that request.", None),
    ("openai_content_filter.sse", "", "content filter"),
])
async def test_openai_refusals_end_the_turn_refused_with_their_text(
        openai_env: str, server: LoopbackServer, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher], stream: str, text: str,
        why: str | None) -> None:
    server.queue(recorded(stream))
    result = await make_dispatcher(openai_env).run_turn(
        TurnRequest(text="hi", workspace=str(workspace)))
    assert (result.status, result.text) == ("refused", text)
    [warning] = result.warnings or []
    assert "declined" in warning and (why is None or why in warning)


async def test_anthropic_refusal_ends_refused_with_the_explanation(
        anthropic_env: str, server: LoopbackServer, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    server.queue(recorded("anthropic_refusal.sse"))
    result = await make_dispatcher(anthropic_env).run_turn(
        TurnRequest(text="hi", workspace=str(workspace)))
    assert result.status == "refused"
    [warning] = result.warnings or []
    assert "This request was refused due to policy." in warning
    assert json.dumps(result.wire())  # the wire model takes the new status


async def test_pause_turn_is_continued_with_the_content_sent_back(
        anthropic_env: str, server: LoopbackServer, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    server.queue(Reply(chunks=AnthropicStream(text=["Searching"], stop="pause_turn").events()),
                 Reply(chunks=AnthropicStream(text=[" done."]).events()))
    result = await make_dispatcher(anthropic_env).run_turn(
        TurnRequest(text="look it up", workspace=str(workspace)))
    assert result.status == "done", result.error
    assert len(server.received) == 2
    again = server.received[1].json["messages"]
    assert again[-1]["role"] == "assistant"
    assert again[-1]["content"][0]["text"] == "Searching"
