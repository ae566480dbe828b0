"""Two editors, each with its own stdio server, on one session: the second is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import OpClient, Starter, write_script

WRITE = [{"tool_calls": [{"name": "write_file",
                          "arguments": {"path": "a.txt", "content": "one\n"}}]},
         {"text": "Written."}]


async def test_a_second_stdio_server_on_a_busy_session_gets_32002(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    asked: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    release: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def hold(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        async def _permission(params: Any) -> dict[str, Any]:
            asked.put_nowait(params)
            return await release  # the turn stays running until the test lets it go

    first = await start(model=write_script(tmp_path / "a.json", WRITE), setup=hold)
    second = await start(model=write_script(tmp_path / "b.json", [{"text": "hi"}] * 2))
    turn = asyncio.ensure_future(first.call("openprogram/chat", {"text": "write a.txt"}))
    prompt = await asyncio.wait_for(asked.get(), 20)
    sid = prompt["sessionId"]

    with pytest.raises(JsonRpcException) as info:
        await second.call("openprogram/chat", {"text": "me too", "sessionId": sid})
    assert info.value.code == -32002
    assert info.value.message.startswith("session is busy in another process")
    assert f"session {sid}" in info.value.message

    release.set_result({"outcome": "selected", "optionId": "allow_once"})
    result = await asyncio.wait_for(turn, 20)
    assert result["status"] == "done" and (workspace / "a.txt").read_text() == "one\n"
    # the lock went with the turn: the other process now continues the same session
    after = await second.call("openprogram/chat", {"text": "me too", "sessionId": sid})
    assert after["status"] == "done" and after["sessionId"] == sid
    history = await second.call("openprogram/history", {"sessionId": sid})
    texts = [n["text"] for n in history["nodes"] if n["role"] == "user"]
    assert texts == ["write a.txt", "me too"]  # one chain, nothing forked
