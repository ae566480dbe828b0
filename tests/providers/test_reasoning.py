"""Reasoning models: thinking and reasoning_content streamed as thoughts, kept in the session,
never reply text, and sent back exactly as each API requires (streams from ``streams/``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from openprogram_lsp.providers.anthropic import AnthropicProvider
from openprogram_lsp.providers.base import ThoughtDelta, ThoughtReady
from openprogram_lsp.providers.http import HttpSettings
from openprogram_lsp.providers.models import model_info
from openprogram_lsp.providers.openai import OpenAIProvider

from .conftest import SECRET
from .loopback import LoopbackServer, Reply
from .run import calls_of, collect, request, text_of
from .test_stop_reasons import STREAMS, recorded
from .wire import AnthropicStream, OpenAIStream

THINKING = {"type": "thinking",
            "thinking": "The user wants the version string; it lives in pyproject.toml — read "
                        "it before answering “what version”.",
            "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds7mzdINUGkBL7NeX3hEq"
                         "LoRq8v1cYpG+5jH0PzYE2c8UhcxJiYtD1yzkRv6uQH0bIsjzK29pQWx1YGYlmpYuCQXzxERF"
                         "2FoZHvDSFK/4tw=="}
REDACTED = {"type": "redacted_thinking",
            "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qyPUc6ns0j4g"
                    "jEv26kq2iyAC7cMBoEaOY5Y+NvY3dnHmLJzKW5TKhTQxNamMSFH2XS/HkO5hEGzKGlHmA=="}
SONNET = "claude-sonnet-4-5-20250929"


def blocks_in(data: bytes, kind: str) -> list[bytes]:
    """The raw JSON text of every ``{"type":KIND...}`` object in a request body, as sent."""
    text = data.decode()
    out, at = [], 0
    needle = f'{{"type":"{kind}"'
    while (at := text.find(needle, at)) >= 0:
        depth, end = 0, at
        for end in range(at, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        out.append(text[at:end + 1].encode())
        at = end + 1
    return out


def unmarked(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """Messages without their cache breakpoints (which move from request to request)."""
    return [{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"}
                              for b in m["content"]]} for m in messages]  # type: ignore[attr-defined]


async def test_anthropic_thinking_streams_as_thoughts_not_text(
        server: LoopbackServer, settings: HttpSettings) -> None:
    server.queue(recorded("anthropic_thinking_tool_use.sse"))
    p = AnthropicProvider(SONNET, base_url=server.url, api_key=SECRET, settings=settings)
    events = await collect(p, request())
    assert text_of(events) == ""
    assert "".join(e.text for e in events if isinstance(e, ThoughtDelta)) == THINKING["thinking"]
    ready = [e.thought for e in events if isinstance(e, ThoughtReady)]
    assert [(t.text, t.signature, t.redacted) for t in ready] == [
        (THINKING["thinking"], THINKING["signature"], None), ("", None, REDACTED["data"])]
    assert [c.name for c in calls_of(events)] == ["read_file"]


def test_thinking_settings_per_model() -> None:
    adaptive = AnthropicProvider("claude-opus-4-7", api_key="k")
    body = adaptive.build_body(request(max_output_tokens=32_000))
    # Opus 4.7 and later leave the thinking text out unless asked (display "omitted")
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert "output_config" not in body
    hidden = AnthropicProvider("claude-opus-4-7", api_key="k", info=model_info(
        "anthropic", "claude-opus-4-7", {"claude-opus-4-7": {"display": "omitted"}}))
    assert hidden.build_body(request())["thinking"] == {"type": "adaptive", "display": "omitted"}
    effort = AnthropicProvider("claude-opus-4-7", api_key="k", info=model_info(
        "anthropic", "claude-opus-4-7", {"claude-opus-*": {"effort": "high"}}))
    assert effort.build_body(request())["output_config"] == {"effort": "high"}
    budget = AnthropicProvider(SONNET, api_key="k")
    assert budget.build_body(request(max_output_tokens=32_000))["thinking"] == {
        "type": "enabled", "budget_tokens": 8_000}
    off = AnthropicProvider(SONNET, api_key="k", info=model_info(
        "anthropic", SONNET, {SONNET: {"thinking": False}}))
    assert "thinking" not in off.build_body(request())
    old = AnthropicProvider("claude-3-5-sonnet-20241022", api_key="k")
    assert "thinking" not in old.build_body(request())
    small = AnthropicProvider("claude-3-7-sonnet-20250219", api_key="k")  # off unless asked
    assert "thinking" not in small.build_body(request())
    small.info = model_info("anthropic", "claude-3-7-sonnet-20250219",
                            {"claude-3-7-*": {"thinking": True}})
    assert small.build_body(request(max_output_tokens=4096))["thinking"] == {
        "type": "enabled", "budget_tokens": 2048}  # below max_tokens, as the API requires


async def test_thinking_and_tool_use_turn_sends_the_blocks_back_byte_for_byte(
        server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    (workspace / "pyproject.toml").write_text('version = "1.2.3"\n')
    server.queue(recorded("anthropic_thinking_tool_use.sse"),
                 Reply(chunks=AnthropicStream(model=SONNET, text=["It is 1.2.3."]).events()),
                 Reply(chunks=AnthropicStream(model=SONNET, text=["Yes."]).events()))
    dispatcher = make_dispatcher(f"anthropic:{SONNET}", permission_mode="bypass")
    seen: list[Event] = []
    result = await dispatcher.run_turn(TurnRequest(text="what version?",
                                                   workspace=str(workspace)),
                                       on_event=seen.append)
    assert result.status == "done", result.error
    assert result.text == "It is 1.2.3."  # the thinking is never reply text
    first, follow = server.received[0], server.received[1]
    assert first.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert first.json["thinking"] == {"type": "enabled", "budget_tokens": 8_000}
    assistant = follow.json["messages"][1]
    assert assistant["content"][:2] == [THINKING, REDACTED]
    assert assistant["content"][2]["type"] == "tool_use"
    # the bytes of each block as the API sent them, unchanged (the signature's escapes too)
    sent = (STREAMS / "anthropic_thinking_tool_use.sse").read_bytes()
    assert json.dumps(THINKING["signature"]).encode() in sent
    assert blocks_in(follow.body, "thinking") == [
        json.dumps(THINKING, separators=(",", ":"), ensure_ascii=False).encode()]
    assert blocks_in(follow.body, "redacted_thinking") == [
        json.dumps(REDACTED, separators=(",", ":"), ensure_ascii=False).encode()]
    # thoughts streamed as their own events, stored on the reply node
    thought = "".join(e.payload["text"] for e in seen if e.type == "thought.delta")
    assert thought == THINKING["thinking"]
    assert "".join(e.payload["text"] for e in seen if e.type == "text.delta") == "It is 1.2.3."
    node = dispatcher.services.store.get_node(result.session_id, result.assistant_node_id)
    stored = node.metadata["thoughts"]
    assert [(t["step"], t.get("signature"), t.get("redacted")) for t in stored] == [
        (0, THINKING["signature"], None), (0, None, REDACTED["data"])]
    assert THINKING["thinking"] not in node.text
    # the next turn renders them from the session: the same bytes, so the cached prefix holds
    await dispatcher.run_turn(TurnRequest(text="sure?", session_id=result.session_id,
                                          workspace=str(workspace)))
    again = server.received[2].body
    assert unmarked(server.received[2].json["messages"][:3]) == unmarked(
        follow.json["messages"][:3])
    assert blocks_in(again, "thinking") == blocks_in(follow.body, "thinking")


async def test_deepseek_thinking_sends_reasoning_content_back_in_the_tool_loop(
        server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (workspace / "setup.cfg").write_text("[metadata]\nname = demo\n")
    server.queue(recorded("deepseek_reasoning_tool_call.sse"),
                 Reply(chunks=OpenAIStream(model="deepseek-v4-pro", text=["demo"]).events()),
                 Reply(chunks=OpenAIStream(model="deepseek-v4-pro", text=["yes"]).events()))
    dispatcher = make_dispatcher("openai:deepseek-v4-pro", permission_mode="bypass")
    result = await dispatcher.run_turn(TurnRequest(text="name?", workspace=str(workspace)))
    assert (result.status, result.text) == ("done", "demo")
    assistant = server.received[1].json["messages"][2]
    assert assistant["role"] == "assistant" and assistant["tool_calls"]
    assert assistant["reasoning_content"] == "I should read the config first."
    # "in all subsequent requests" (DeepSeek's thinking-mode guide): a later turn too
    await dispatcher.run_turn(TurnRequest(text="sure?", session_id=result.session_id,
                                          workspace=str(workspace)))
    later = [m for m in server.received[2].json["messages"] if m.get("tool_calls")]
    assert [m["reasoning_content"] for m in later] == ["I should read the config first."]


async def test_deepseek_r1_never_gets_reasoning_content_back(
        server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    stream = (STREAMS / "deepseek_reasoning_tool_call.sse").read_bytes().replace(
        b"deepseek-v4-pro", b"deepseek-reasoner")
    (workspace / "setup.cfg").write_text("[metadata]\nname = demo\n")
    server.queue(Reply(chunks=[stream]),
                 Reply(chunks=OpenAIStream(model="deepseek-reasoner", text=["demo"]).events()))
    dispatcher = make_dispatcher("openai:deepseek-reasoner", permission_mode="bypass")
    result = await dispatcher.run_turn(TurnRequest(text="name?", workspace=str(workspace)))
    assert result.status == "done", result.error
    node = dispatcher.services.store.get_node(result.session_id, result.assistant_node_id)
    assert node.metadata["thoughts"][0]["text"] == "I should read the config first."
    assert all("reasoning_content" not in m for m in server.received[1].json["messages"])


async def test_reasoning_effort_is_sent_when_configured(
        server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, workspace: Path,
        tmp_path: Path, make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    conf = tmp_path / "xdg" / "openprogram-lsp" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('[models."gpt-5*"]\neffort = "low"\n[models."gpt-5-mini"]\nmax_output = 9000\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    server.queue(Reply(chunks=OpenAIStream(model="gpt-5-mini", text=["ok"]).events()))
    settings = load_settings(user_file=True)
    result = await make_dispatcher("openai:gpt-5-mini", settings=settings).run_turn(
        TurnRequest(text="hi", workspace=str(workspace)))
    assert result.status == "done", result.error
    body = server.received[0].json
    assert body["reasoning_effort"] == "low"
    assert body["max_tokens"] == 9000


async def test_adaptive_thinking_turn_sends_its_blocks_back_without_a_beta_header(
        server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    (workspace / "pyproject.toml").write_text('version = "1.2.3"\n')
    server.queue(recorded("anthropic_thinking_tool_use.sse"),
                 Reply(chunks=AnthropicStream(text=["1.2.3"]).events()))
    dispatcher = make_dispatcher("anthropic:claude-opus-4-7", permission_mode="bypass")
    result = await dispatcher.run_turn(TurnRequest(text="version?", workspace=str(workspace)))
    assert result.status == "done", result.error
    first, follow = server.received
    assert first.json["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert "anthropic-beta" not in first.headers  # interleaving comes with adaptive thinking
    assert follow.json["messages"][1]["content"][:2] == [THINKING, REDACTED]
    assert follow.json["max_tokens"] <= 32_000


async def test_omitted_thinking_shows_nothing_and_still_goes_back_signed(
        server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, workspace: Path,
        tmp_path: Path, make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    conf = tmp_path / "xdg" / "openprogram-lsp" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('[models."claude-opus-4-7"]\ndisplay = "omitted"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (workspace / "pyproject.toml").write_text('version = "1.2.3"\n')
    server.queue(recorded("anthropic_thinking_omitted.sse"),
                 Reply(chunks=AnthropicStream(model="claude-opus-4-7", text=["1.2.3"]).events()))
    dispatcher = make_dispatcher("anthropic:claude-opus-4-7", permission_mode="bypass",
                                 settings=load_settings(user_file=True))
    seen: list[Event] = []
    result = await dispatcher.run_turn(TurnRequest(text="version?", workspace=str(workspace)),
                                       on_event=seen.append)
    assert (result.status, result.text) == ("done", "1.2.3")
    first, follow = server.received
    assert first.json["thinking"] == {"type": "adaptive", "display": "omitted"}
    assert not [e for e in seen if e.type == "thought.delta"]  # nothing to show
    sent = (STREAMS / "anthropic_thinking_omitted.sse").read_text()
    signature = json.loads(sent.split("signature_delta")[1].split('"signature":')[1]
                           .split("}")[0])
    assert follow.json["messages"][1]["content"][0] == {
        "type": "thinking", "thinking": "", "signature": signature}
    node = dispatcher.services.store.get_node(result.session_id, result.assistant_node_id)
    assert [(t["text"], t["signature"]) for t in node.metadata["thoughts"]] == [("", signature)]


async def test_gemini_thought_signature_goes_back_on_its_tool_call(
        server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, workspace: Path,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (workspace / "setup.cfg").write_text("[metadata]\nname = demo\n")
    model = "gemini-3-pro-preview"
    server.queue(recorded("gemini_thought_signature_tool_calls.sse"),
                 Reply(chunks=OpenAIStream(model=model, text=["demo"]).events()),
                 Reply(chunks=OpenAIStream(model=model, text=["yes"]).events()))
    dispatcher = make_dispatcher(f"openai:{model}", permission_mode="bypass")
    seen: list[Event] = []
    result = await dispatcher.run_turn(TurnRequest(text="name?", workspace=str(workspace)),
                                       on_event=seen.append)
    assert (result.status, result.text) == ("done", "demo")
    sent = (STREAMS / "gemini_thought_signature_tool_calls.sse").read_text()
    extra = json.loads(sent.split("data: ")[1])["choices"][0]["delta"]["tool_calls"][0][
        "extra_content"]
    assistant = server.received[1].json["messages"][2]
    first, second = assistant["tool_calls"]
    assert (first["function"]["name"], first["extra_content"]) == ("read_file", extra)
    assert second["function"]["name"] == "find_files" and "extra_content" not in second
    assert json.dumps(extra["google"]["thought_signature"]) in server.received[1].body.decode()
    assert not [e for e in seen if e.type == "thought.delta"]  # a signature has no text
    await dispatcher.run_turn(TurnRequest(text="sure?", session_id=result.session_id,
                                          workspace=str(workspace)))
    later = [m for m in server.received[2].json["messages"] if m.get("tool_calls")]
    assert [c.get("extra_content") for c in later[0]["tool_calls"]] == [extra, None]
    # another model never gets it (signatures are checked by the model that wrote them)
    other = make_dispatcher("openai:gpt-test", permission_mode="bypass")
    server.queue(Reply(chunks=OpenAIStream(text=["ok"]).events()))
    await other.run_turn(TurnRequest(text="and you?", session_id=result.session_id,
                                     workspace=str(workspace)))
    assert any(m.get("tool_calls") for m in server.received[3].json["messages"])
    assert "extra_content" not in server.received[3].body.decode()


def test_a_summary_asks_for_little_or_no_reasoning() -> None:
    """The summariser's requests (``thinking=False``): no Anthropic thinking, and an OpenAI
    reasoning model asked for low effort whatever is configured (its reasoning tokens come out
    of the summary's few output tokens); a model without reasoning controls gets none."""
    summary = request(max_output_tokens=1_800, thinking=False)
    assert "thinking" not in AnthropicProvider(SONNET, api_key="k").build_body(summary)
    assert "thinking" not in AnthropicProvider("claude-opus-4-7", api_key="k").build_body(
        summary)
    configured = OpenAIProvider("gpt-5-mini", api_key="k", info=model_info(
        "openai", "gpt-5-mini", {"gpt-5-mini": {"effort": "high"}}))
    assert configured.build_body(summary)["reasoning_effort"] == "low"
    assert configured.build_body(request())["reasoning_effort"] == "high"
    assert "reasoning_effort" not in OpenAIProvider("gpt-4o", api_key="k").build_body(summary)
