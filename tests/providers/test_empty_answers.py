"""Answers with nothing in them end the turn with something the user can read: an error naming
what came back (no choices, an empty stream) or a warning (an empty reply)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.core.types import TurnRequest, TurnResult
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event

from .conftest import SECRET
from .loopback import LoopbackServer, Reply
from .test_end_to_end import Flavor, flavor  # noqa: F401  (fixture)
from .wire import sse

USAGE_ONLY = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test",
              "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 0}}


@pytest.fixture
def openai(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> LoopbackServer:
    """The OpenAI-compatible client pointed at the loopback server."""
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return server


async def _turn(dispatcher: Dispatcher, workspace: Path) -> tuple[TurnResult, list[Event]]:
    events: list[Event] = []
    result = await dispatcher.run_turn(TurnRequest(text="hi", workspace=str(workspace)),
                                       on_event=events.append)
    return result, events


async def test_no_choices_ends_the_turn_with_an_error_naming_what_came_back(
        openai: LoopbackServer, make_dispatcher: Callable[..., Dispatcher],
        workspace: Path) -> None:
    openai.queue(Reply(chunks=[sse(USAGE_ONLY), b"data: [DONE]\n\n"]))
    dispatcher = make_dispatcher("openai:gpt-test")
    result, events = await _turn(dispatcher, workspace)
    assert result.status == "error" and result.error is not None, result
    assert "no choices" in result.error.message, result.error.message
    assert '"choices":[]' in result.error.message
    [finished] = [e for e in events if e.type == "turn.finished"]
    assert finished.payload["status"] == "error"
    assert "no choices" in finished.payload["error"]["message"]
    node = dispatcher.services.store.get_node(result.session_id, result.assistant_node_id)
    assert node.status == "error" and "no choices" in node.text
    assert len(openai.received) == 1  # the server answered (with nothing): not retried


async def test_an_empty_stream_ends_the_turn_with_an_error(
        openai: LoopbackServer, make_dispatcher: Callable[..., Dispatcher],
        workspace: Path) -> None:
    openai.queue(Reply(chunks=[b"data: [DONE]\n\n"]))
    result, events = await _turn(make_dispatcher("openai:gpt-test"), workspace)
    assert result.status == "error" and result.error is not None
    assert "empty stream" in result.error.message, result.error.message
    assert [e.payload["status"] for e in events if e.type == "turn.finished"] == ["error"]


async def test_an_empty_reply_is_done_with_a_warning(
        flavor: Flavor, server: LoopbackServer,  # noqa: F811
        make_dispatcher: Callable[..., Dispatcher], workspace: Path) -> None:
    server.queue(Reply(chunks=flavor.text([])))
    dispatcher = make_dispatcher(flavor.spec)
    result, events = await _turn(dispatcher, workspace)
    assert result.status == "done", result
    warnings = result.warnings or []
    assert any("empty reply" in w for w in warnings), warnings
    [finished] = [e for e in events if e.type == "turn.finished"]
    assert finished.payload["warnings"] == warnings
    node = dispatcher.services.store.get_node(result.session_id, result.assistant_node_id)
    assert node.metadata["warnings"] == warnings
