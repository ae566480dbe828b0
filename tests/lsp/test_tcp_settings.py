"""Over ``serve --tcp`` every editor setting belongs to the connection that gave it.

One editor sets every option there is (through ``workspace/didChangeConfiguration``, after a
plain ``initialize``); a second editor on the same server and workspace then runs turns that
would show each of them leaking. Real loopback sockets, a real server process, a real MCP
server and a loopback model API.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from openprogram_lsp.lsp.settings import EditorOptions
from tests.lsp.tcp_helpers import Client, TcpServer, start_tcp_server, stop_tcp_server
from tests.providers.loopback import LoopbackServer, Reply
from tests.providers.wire import OpenAIStream
from tests.tools.mcp.demo import demo_def

pytestmark = pytest.mark.timeout(120)
SLOW_ANSWER = 0.6  # the second editor answers after the first one's timeouts (0.2 s)


@pytest_asyncio.fixture
async def tcp(tmp_path: Path) -> AsyncIterator[TcpServer]:
    server = await start_tcp_server(tmp_path / "home", env={"OP_B_KEY": "sk-b"})
    yield server
    await stop_tcp_server(server)


def _script(path: Path, responses: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps(responses))
    return f"scripted:{path}"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def first_editors_options(tmp_path: Path, api_a: LoopbackServer) -> dict[str, Any]:
    """One value for every option, each of which would change the second editor's turns."""
    return {
        "model": _script(tmp_path / "a.json", [{"text": "from A"}] * 4),
        "permissionMode": "plan",
        "rules": [{"tool": "run_command", "decision": "allow"},
                  {"tool": "write_file", "decision": "deny"}],
        "approvalTimeout": 0.2,
        "questionTimeout": 0.2,
        "agentModel": "scripted:/nonexistent/a-children.json",
        "maxMessages": 1,
        "mcpServers": {"notes": demo_def(notes=tmp_path / "notes")},
        "disabledTools": ["list_dir"],
        "allowedTools": ["read_file"],
        "providers": {"openai": {"baseUrl": f"{api_a.url}/v1", "apiKeyEnv": "OP_A_KEY"}},
        "blame": {"enabled": False},
    }


def test_the_probe_covers_every_editor_option(tmp_path: Path) -> None:
    """A new option needs a probe here before it can ship."""
    probe = first_editors_options(tmp_path, LoopbackServer())
    wire_names = {f.alias or name for name, f in EditorOptions.model_fields.items()}
    assert set(probe) == wire_names


async def test_no_option_of_one_editor_reaches_another_editors_turns(
        tcp: TcpServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "notes").mkdir()
    api_a, api_b = LoopbackServer().start(), LoopbackServer().start()
    api_b.queue(Reply(chunks=OpenAIStream(model="gpt-b", text=["from B's API"]).events()))
    opened: list[Client] = []
    try:
        first = await Client.connect(tcp.port)
        opened.append(first)
        assert "result" in await first.initialize(tcp.token, ws)
        first.send({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                    "params": {"settings": {"openprogram": first_editors_options(tmp_path,
                                                                                 api_a)}}})
        await first.call("openprogram/sessions", {})  # the change is in before B starts
        b_script = [
            {"text": "from B"},
            _call("list_dir", path="."), {"text": "listed"},
            _call("write_file", path="b.txt", content="b\n"), {"text": "wrote"},
            _call("run_command", command="echo hi"), {"text": "ran"},
            _call("ask_user", question="Proceed?", options=["yes", "no"]), {"text": "asked"},
            _call("mcp__notes__echo", text="x"), {"text": "tried mcp"},
            _call("agent", prompt="help", label="kid"), {"text": "spawned"},
            {"text": "child done"}, {"text": "follow-up"}, {"text": "spare"},
        ]
        second = await Client.connect(tcp.port)
        opened.append(second)
        asked: list[str] = []

        async def answer_slowly(method: str, params: Any) -> Any:
            asked.append(method)
            await asyncio.sleep(SLOW_ANSWER)
            if method == "openprogram/requestPermission":
                return {"outcome": "selected", "optionId": "allow_once"}
            return {"answer": "yes"}

        second.on_request = answer_slowly
        init = await second.initialize(tcp.token, ws, options={
            "model": _script(tmp_path / "b.json", b_script),
            "providers": {"openai": {"baseUrl": f"{api_b.url}/v1", "apiKeyEnv": "OP_B_KEY"}}})
        assert "result" in init

        async def turn(text: str, sid: str | None = None) -> dict[str, Any]:
            params = {"text": text, **({"sessionId": sid} if sid else {})}
            result: dict[str, Any] = await second.call("openprogram/chat", params, timeout=60)
            assert result["status"] == "done", result
            return result

        def finished(result: dict[str, Any]) -> dict[str, Any]:
            tid = result["assistantNodeId"]
            [event] = [e for e in second.of_type("tool.finished") if e["turnId"] == tid]
            return dict(event["data"])

        hello = await turn("hello")  # model: B's own, not A's
        sid = hello["sessionId"]
        assert hello["text"] == "from B"
        listed = await turn("list", sid)  # disabledTools / allowedTools: A's only
        assert finished(listed)["status"] == "completed", finished(listed)
        wrote = await turn("write", sid)  # permissionMode plan, a deny rule, approvalTimeout
        assert finished(wrote)["status"] == "completed", finished(wrote)
        assert (ws / "b.txt").read_text() == "b\n"
        lenses = await second.call("textDocument/codeLens",  # blame: A switched its own off
                                   {"textDocument": {"uri": (ws / "b.txt").as_uri()}})
        assert lenses, "agent blame is off for the second editor too"
        ran = await turn("run", sid)  # A's allow rule for run_command: B is still asked
        assert finished(ran)["status"] == "completed", finished(ran)
        assert asked == ["openprogram/requestPermission"] * 2
        answered = await turn("ask", sid)  # questionTimeout
        assert "yes" in finished(answered)["output"], finished(answered)
        mcp = await turn("mcp", sid)  # A's MCP server is not among B's tools
        assert finished(mcp)["status"] == "failed", finished(mcp)
        spawned = await turn("spawn", sid)  # agentModel, maxMessages: a child runs, with B's
        assert finished(spawned)["status"] == "completed", finished(spawned)
        ended = await second.wait_event("subagent.ended", timeout=30)
        assert ended["data"]["status"] == "done", ended
        remote = await second.call("openprogram/chat", {"text": "api", "model": "openai:gpt-b"},
                                   timeout=60)  # a new session: the follow-up may still run
        assert remote["text"] == "from B's API", remote  # providers: B's base URL and key
        assert api_a.received == [] and len(api_b.received) == 1
        assert api_b.received[0].headers["authorization"] == "Bearer sk-b"
        assert second.server_requests and not first.server_requests
    finally:
        for c in opened:
            await c.close()
        api_a.stop()
        api_b.stop()
