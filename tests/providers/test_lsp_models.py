"""Real models through the language server over stdio: selection precedence and a tool turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.lsp.conftest import OpClient, Starter, close_client, start  # noqa: F401  (fixture)

from .conftest import SECRET
from .loopback import LoopbackServer, Reply
from .wire import AnthropicStream, Call, OpenAIStream, fragments


@pytest.fixture
def model_env(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> LoopbackServer:
    """Both APIs pointed at the loopback server (the server process inherits the env)."""
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return server


async def test_request_model_beats_initialization_options_and_tools_round_trip(
        start: Starter, model_env: LoopbackServer, workspace: Path,  # noqa: F811
        tmp_path: Path) -> None:
    server = model_env
    (workspace / "todo.md").write_text("- ship it\n")
    call = Call("toolu_1", "read_file", fragments({"path": "todo.md"}, 4))
    server.queue(Reply(chunks=AnthropicStream(text=["Checking."], calls=[call]).events()),
                 Reply(chunks=AnthropicStream(text=["One item: ship it."]).events()),
                 Reply(chunks=OpenAIStream(text=["Hello from openai."]).events()))

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")  # type: ignore[untyped-decorator]
        def _permission(params: Any) -> dict[str, Any]:
            return {"outcome": "selected", "optionId": "allow_once"}

    client = await start(init_options={"model": "openai:gpt-test"}, setup=setup)
    first = await client.call("openprogram/chat", {"text": "what is in todo.md?",
                                                   "model": "anthropic:claude-test"})
    assert first["status"] == "done", first
    assert first["text"].endswith("One item: ship it.")
    assert [r.path for r in server.received[:2]] == ["/v1/messages", "/v1/messages"]
    results = [b for m in server.received[1].json["messages"] for b in m["content"]
               if b["type"] == "tool_result"]
    uses = [b["id"] for m in server.received[1].json["messages"] if m["role"] == "assistant"
            for b in m["content"] if b["type"] == "tool_use"]
    assert results[0]["tool_use_id"] == uses[0] and "ship it" in results[0]["content"]

    second = await client.call("openprogram/chat", {"text": "hi"})
    assert second["status"] == "done", second
    assert second["text"] == "Hello from openai."
    assert server.received[2].path == "/v1/chat/completions"
    assert server.received[2].json["model"] == "gpt-test"
    assert all(SECRET not in str(e) for e in client.events)
    # the server shut down first: its checkpoint work after a turn (index.lock) is over, and
    # everything it would keep is written
    assert await close_client(client) == ""
    files = [f for f in tmp_path.rglob("*") if f.is_file()]  # the store and the server log
    assert any(f.suffix == ".log" for f in files)
    assert not [f for f in files if SECRET.encode() in f.read_bytes()]
