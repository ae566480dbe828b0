"""Whole turns through the real agent loop and dispatcher against the loopback model servers."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from tests import forkserver

from .conftest import SECRET
from .loopback import LoopbackServer, Received, Reply
from .wire import AnthropicStream, Call, OpenAIStream, fragments

COMMAND = [sys.executable, "-m", "openprogram_lsp"]
"""The CLI runs: forked from the worker's pre-imported server (tests/forkserver.py), what they
check is the chat's answer and the provider's requests, not the process start."""


@dataclass
class Flavor:
    """One API as the product is configured for it, and how to read its requests back."""

    name: str
    spec: str
    env: Callable[[str], dict[str, str]]
    text: Callable[[list[str]], list[bytes]]
    calls: Callable[[list[Call], list[str]], list[bytes]]
    tool_results: Callable[[Received], list[tuple[str, str]]]  # (call id, content)
    head: int


def _openai_results(got: Received) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in got.json["messages"]
            if m["role"] == "tool"]


def _anthropic_results(got: Received) -> list[tuple[str, str]]:
    return [(b["tool_use_id"], b["content"]) for m in got.json["messages"]
            if m["role"] == "user" for b in m["content"] if b["type"] == "tool_result"]


FLAVORS = [
    Flavor("openai", "openai:gpt-test",
           lambda url: {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": SECRET},
           lambda text: OpenAIStream(text=text).events(),
           lambda calls, text: OpenAIStream(text=text, calls=calls).events(),
           _openai_results, 2),
    Flavor("anthropic", "anthropic:claude-test",
           lambda url: {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": SECRET},
           lambda text: AnthropicStream(text=text).events(),
           lambda calls, text: AnthropicStream(text=text, calls=calls).events(),
           _anthropic_results, 4),
]


@pytest.fixture(params=FLAVORS, ids=[f.name for f in FLAVORS])
def flavor(request: pytest.FixtureRequest, server: LoopbackServer,
           monkeypatch: pytest.MonkeyPatch) -> Flavor:
    """Each API, with the environment pointing the product at the loopback server."""
    f: Flavor = request.param
    for key, value in f.env(server.url).items():
        monkeypatch.setenv(key, value)
    return f


def read_call(path: str, call_id: str = "call_read_1") -> Call:
    return Call(call_id, "read_file", fragments({"path": path}, 3))


def assert_no_secret(*places: Path | str) -> None:
    """The API key is nowhere in these files or texts."""
    for place in places:
        if isinstance(place, Path):
            for f in place.rglob("*"):
                if f.is_file():
                    assert SECRET.encode() not in f.read_bytes(), f
        else:
            assert SECRET not in place


def test_cli_chat_runs_a_turn_with_a_tool_call(
        flavor: Flavor, server: LoopbackServer, tmp_path: Path) -> None:
    home, ws = tmp_path / "cli-home", tmp_path / "cli-ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("The secret word is plum.\n")
    server.queue(Reply(status=429, headers=[("retry-after", "0")], body=b"{}"),
                 Reply(chunks=flavor.calls([read_call("notes.txt")], ["Let me look."])),
                 Reply(chunks=flavor.text(["The word ", "is plum."])))
    env = {**os.environ, **flavor.env(server.url), "OPENPROGRAM_MODEL": flavor.spec,
           "OPENPROGRAM_HOME": str(home)}
    r = forkserver.run_command(
        [*COMMAND, "chat", "--permission-mode", "bypass",
         "--workspace", str(ws), "--json", "what does notes.txt say?"],
        env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    result = lines[-1]["data"]
    assert result["status"] == "done"
    assert "The word is plum." in result["text"]
    assert len(server.received) == 3
    [(call_id, content)] = flavor.tool_results(server.received[2])
    # the server's own call id (unique in the session) goes back, not the provider's
    assert call_id.startswith("call_") and call_id != "call_read_1"
    assert "The secret word is plum." in content
    assert server.received[1].json == server.received[0].json  # the 429 was retried as is
    assert_no_secret(home, r.stdout, r.stderr)


async def test_parallel_tool_calls_run_and_both_results_go_back(
        flavor: Flavor, server: LoopbackServer, make_dispatcher: Callable[..., Dispatcher],
        workspace: Path, home: Path) -> None:
    a = Call("call_w1", "write_file", fragments({"path": "a.txt", "content": "A\n"}, 4))
    b = Call("call_w2", "write_file", fragments({"path": "sub/b.txt", "content": "B\n"}, 2))
    server.queue(Reply(chunks=flavor.calls([a, b], [])),
                 Reply(chunks=flavor.text(["Both written."])))
    dispatcher = make_dispatcher(flavor.spec, permission_mode="bypass")
    result = await dispatcher.run_turn(TurnRequest(text="write two files",
                                                   workspace=str(workspace)))
    assert result.status == "done", result.error
    assert result.text.endswith("Both written.")
    assert (workspace / "a.txt").read_text() == "A\n"
    assert (workspace / "sub/b.txt").read_text() == "B\n"
    node = dispatcher.services.store.get_node(result.session_id, result.assistant_node_id)
    ids = [c.id for c in node.tool_calls or []]
    assert len(set(ids)) == 2
    assert [cid for cid, _ in flavor.tool_results(server.received[1])] == ids
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert_no_secret(home)


async def test_stream_broken_mid_way_ends_the_turn_as_an_error_keeping_the_text(
        flavor: Flavor, server: LoopbackServer, make_dispatcher: Callable[..., Dispatcher],
        workspace: Path, home: Path) -> None:
    chunks = flavor.text(["Half an ", "answer", " and never the rest"])
    server.queue(Reply(chunks=chunks[:flavor.head + 2], cut=True))
    dispatcher = make_dispatcher(flavor.spec)
    result = await dispatcher.run_turn(TurnRequest(text="hi", workspace=str(workspace)))
    assert result.status == "error"
    assert result.error is not None and flavor.name in result.error.message
    assert "broke mid-way" in result.error.message
    assert "Half an answer" in result.text
    node = dispatcher.services.store.index(result.session_id).nodes[result.assistant_node_id]
    assert "Half an answer" in node.text and node.status == "error"
    assert len(server.received) == 1
    assert_no_secret(home)


async def test_auth_failure_ends_the_turn_with_advice(
        flavor: Flavor, server: LoopbackServer, make_dispatcher: Callable[..., Dispatcher],
        workspace: Path, home: Path) -> None:
    server.queue(Reply(status=401, body=json.dumps(
        {"error": {"message": f"Invalid key {SECRET}", "type": "authentication_error"}}
    ).encode()))
    result = await make_dispatcher(flavor.spec).run_turn(
        TurnRequest(text="hi", workspace=str(workspace)))
    assert result.status == "error" and result.error is not None
    assert "check" in result.error.message and "_API_KEY" in result.error.message
    assert_no_secret(home, result.error.message)


async def test_cancel_mid_stream_closes_the_connection(
        flavor: Flavor, server: LoopbackServer, make_dispatcher: Callable[..., Dispatcher],
        workspace: Path) -> None:
    server.queue(Reply(chunks=flavor.text(["Working on it", "…"])[:flavor.head + 1],
                       hold=True))
    control = TurnControl()
    deltas: list[Event] = []

    def on_event(ev: Event) -> None:
        if ev.type == "text.delta":
            deltas.append(ev)
            control.request_cancel()

    result = await make_dispatcher(flavor.spec).run_turn(
        TurnRequest(text="hi", workspace=str(workspace)), control=control, on_event=on_event)
    assert result.status == "cancelled"
    assert deltas
    assert await asyncio.to_thread(server.client_left.wait, 10)


async def test_model_field_of_the_request_wins(
        flavor: Flavor, server: LoopbackServer, make_dispatcher: Callable[..., Dispatcher],
        workspace: Path) -> None:
    server.queue(Reply(chunks=flavor.text(["ok"])))
    model = flavor.spec.replace("-test", "-override")
    result = await make_dispatcher(flavor.spec).run_turn(
        TurnRequest(text="hi", workspace=str(workspace), model=model))
    assert result.status == "done", result.error
    assert server.received[0].json["model"] == model.split(":", 1)[1]


async def test_500_twice_then_success_through_the_loop(
        flavor: Flavor, server: LoopbackServer, make_dispatcher: Callable[..., Dispatcher],
        workspace: Path) -> None:
    err = Reply(status=500, body=b'{"error": {"message": "boom", "type": "server_error"}}')
    server.queue(err, err, Reply(chunks=flavor.text(["Back ", "again."])))
    result = await make_dispatcher(flavor.spec).run_turn(
        TurnRequest(text="hi", workspace=str(workspace)))
    assert result.status == "done", result.error
    assert result.text == "Back again."
    assert len(server.received) == 3
    assert server.received[0].json == server.received[2].json


async def test_malformed_line_through_the_loop_is_a_clear_turn_error(
        flavor: Flavor, server: LoopbackServer, make_dispatcher: Callable[..., Dispatcher],
        workspace: Path) -> None:
    chunks = flavor.text(["fine so far"])
    server.queue(Reply(chunks=[*chunks[:flavor.head], b"data: {oops\n\n", *chunks[flavor.head:]]))
    result = await make_dispatcher(flavor.spec).run_turn(
        TurnRequest(text="hi", workspace=str(workspace)))
    assert result.status == "error" and result.error is not None
    assert result.error.message.startswith(f"{flavor.name}: malformed JSON in the stream")
    assert "fine so far" in result.text
    assert len(server.received) == 1


def test_cli_model_flag_beats_the_environment(server: LoopbackServer, tmp_path: Path) -> None:
    ws = tmp_path / "flag-ws"
    ws.mkdir()
    server.queue(Reply(chunks=OpenAIStream(text=["from the flag's model"]).events()))
    env = {**os.environ, "OPENPROGRAM_HOME": str(tmp_path / "flag-home"),
           "OPENPROGRAM_MODEL": "anthropic:claude-from-env", "ANTHROPIC_BASE_URL": server.url,
           "OPENAI_BASE_URL": f"{server.url}/v1"}
    env.pop("OPENAI_API_KEY", None)
    r = forkserver.run_command([*COMMAND, "chat", "--model", "openai:gpt-from-flag",
                                "--workspace", str(ws), "hi"], env=env, cwd=tmp_path,
                               timeout=120)
    assert r.returncode == 0, r.stderr
    assert "from the flag's model" in r.stdout
    [got] = server.received
    assert (got.path, got.json["model"]) == ("/v1/chat/completions", "gpt-from-flag")
    assert "authorization" not in got.headers
