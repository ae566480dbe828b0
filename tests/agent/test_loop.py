"""agent_loop against the scripted model and the real tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.agent.loop import LoopState, agent_loop
from openprogram_lsp.agent.tool_exec import ToolRunner
from openprogram_lsp.core.errors import ProviderError, TurnCancelled
from openprogram_lsp.core.types import Message
from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.providers.scripted import ScriptedProvider
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.registry import ToolRegistry


def provider(tmp_path: Path, responses: list[dict]) -> ScriptedProvider:
    f = tmp_path / f"script{len(list(tmp_path.glob('script*')))}.json"
    f.write_text(json.dumps(responses))
    return ScriptedProvider(str(f))


def runner(workspace: Path, bus: EventBus, mode: str = "bypass") -> ToolRunner:
    return ToolRunner(tools=ToolRegistry(builtin_tools()),
                      ctx=ToolContext(workspace=workspace, session_id="s", turn_id="t"),
                      bus=bus, mode=mode)  # type: ignore[arg-type]


async def test_tool_result_is_fed_back_in_order(tmp_path: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_text("content of a")
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)
    p = provider(tmp_path, [
        {"text": "Let me read.", "tool_calls": [
            {"id": "c1", "name": "read_file", "arguments": {"path": "a.txt"}},
            {"id": "c2", "name": "list_dir", "arguments": {}}]},
        {"text": "It says: content of a"}])
    messages = [Message(role="user", content="what is in a.txt?")]
    state = await agent_loop(provider=p, system="sys", messages=messages,
                             runner=runner(workspace, bus), bus=bus, control=TurnControl())
    assert [m.role for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    call_ids = [c.id for c in messages[1].tool_calls]
    assert messages[2].tool_call_id == call_ids[0] and messages[2].content == "     1\tcontent of a"
    assert messages[3].tool_call_id == call_ids[1]
    assert state.text == "Let me read.\n\nIt says: content of a"
    assert [c.status for c in state.tool_calls] == ["completed", "completed"]
    assert state.model_calls == 2 and state.usage.input_tokens > 0
    assert [e.session_id for e in seen] == ["s"] * len(seen)


async def test_unknown_tool_and_bad_arguments_are_tool_errors(tmp_path: Path,
                                                              workspace: Path) -> None:
    bus = EventBus()
    p = provider(tmp_path, [{"tool_calls": [{"name": "nope", "arguments": {}},
                                            {"name": "read_file", "arguments": {}}]},
                            {"text": "ok"}])
    messages = [Message(role="user", content="x")]
    state = await agent_loop(provider=p, system="", messages=messages,
                             runner=runner(workspace, bus), bus=bus, control=TurnControl())
    assert "Unknown tool 'nope'" in messages[2].content and messages[2].is_error
    assert "path: Field required" in messages[3].content
    assert state.text == "ok"


async def test_provider_error_propagates_with_partial_state(tmp_path: Path,
                                                            workspace: Path) -> None:
    bus = EventBus()
    p = provider(tmp_path, [{"text": "part one", "tool_calls": [
        {"name": "list_dir", "arguments": {}}]}, {"error": "boom"}])
    state = LoopState()
    with pytest.raises(ProviderError, match="boom"):
        await agent_loop(provider=p, system="", messages=[Message(role="user", content="x")],
                         runner=runner(workspace, bus), bus=bus, control=TurnControl(),
                         state=state)
    assert state.text == "part one" and len(state.tool_calls) == 1


async def test_cancel_during_a_slow_tool_is_prompt(tmp_path: Path, workspace: Path) -> None:
    bus = EventBus()
    control = TurnControl()
    p = provider(tmp_path, [{"tool_calls": [{"name": "run_command",
                                             "arguments": {"command": "sleep 30"}}]}])

    def on(ev: Event) -> None:
        if ev.type == "tool.before":
            asyncio.get_running_loop().call_later(0.1, control.request_cancel)

    bus.subscribe(on)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(TurnCancelled):
        await agent_loop(provider=p, system="", messages=[Message(role="user", content="x")],
                         runner=runner(workspace, bus), bus=bus, control=control)
    assert loop.time() - t0 < 5


async def test_a_call_cut_before_its_usage_is_counted_from_its_text(tmp_path: Path,
                                                                   workspace: Path) -> None:
    """The cancel cuts the second model call mid-stream, before the provider reports usage:
    the first call's reported usage stays, the cut one is counted from its text (estimated)."""
    bus = EventBus()
    control = TurnControl()
    said = "word " * 40
    p = provider(tmp_path, [{"text": "Reading.", "tool_calls": [{"name": "list_dir",
                                                                 "arguments": {}}]},
                            {"text": said, "delay": 0.05}])
    deltas: list[str] = []

    def on(ev: Event) -> None:
        if ev.type == "text.delta" and ev.payload["text"] != "Reading.":
            deltas.append(ev.payload["text"])
            if len(deltas) == 2:
                control.request_cancel()

    bus.subscribe(on)
    state = LoopState()
    with pytest.raises(TurnCancelled):
        await agent_loop(provider=p, system="be brief", runner=runner(workspace, bus),
                         messages=[Message(role="user", content="look around " * 20)],
                         bus=bus, control=control, state=state)
    first = state.first_call_usage
    assert first is not None and not first.estimated
    cut = state.usage.output_tokens - first.output_tokens
    streamed = "".join(deltas)
    assert 0 < len(streamed) < len(said)
    assert cut == (len(state.steps[1]) + 3) // 4 and state.steps[1] == streamed
    assert state.usage.input_tokens > first.input_tokens  # the cut call's request, counted
    assert state.usage.estimated is True
    assert state.usage.wire()["estimated"] is True


async def test_follow_up_runs_at_wrap_up(tmp_path: Path, workspace: Path) -> None:
    bus = EventBus()
    control = TurnControl()
    control.follow_up("and one more thing")
    p = provider(tmp_path, [{"text": "first"}, {"text": "second"}])
    messages = [Message(role="user", content="x")]
    state = await agent_loop(provider=p, system="", messages=messages,
                             runner=runner(workspace, bus), bus=bus, control=control)
    assert messages[2].content == "and one more thing"
    assert state.text == "first\n\nsecond"


async def test_plan_mode_refuses_edits(tmp_path: Path, workspace: Path) -> None:
    bus = EventBus()
    p = provider(tmp_path, [{"tool_calls": [{"name": "write_file", "arguments": {
        "path": "x", "content": "y"}}]}, {"text": "ok"}])
    messages = [Message(role="user", content="x")]
    await agent_loop(provider=p, system="", messages=messages,
                     runner=runner(workspace, bus, mode="plan"), bus=bus, control=TurnControl())
    assert "read-only" in messages[2].content and not (workspace / "x").exists()


async def test_call_ids_are_the_servers_own_and_never_repeat(tmp_path: Path,
                                                            workspace: Path) -> None:
    """A model that reuses its call ids (every step says "c1") still gets distinct ids."""
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)
    p = provider(tmp_path, [
        {"tool_calls": [{"id": "c1", "name": "list_dir", "arguments": {}}]},
        {"tool_calls": [{"id": "c1", "name": "list_dir", "arguments": {}}]},
        {"text": "done"}])
    messages = [Message(role="user", content="list twice")]
    state = await agent_loop(provider=p, system="sys", messages=messages,
                             runner=runner(workspace, bus), bus=bus, control=TurnControl())
    ids = [c.id for c in state.tool_calls]
    assert len(set(ids)) == 2 and "c1" not in ids
    started = [e.payload["tool_call_id"] for e in seen if e.type == "tool.started"]
    assert started == ids
