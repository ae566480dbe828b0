"""Several sessions at once, a busy session refused, steering a running turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Starter, write_script

SLEEPS = [
    {"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 1"}}]},
    {"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 1"}}]},
    {"text": "first done"},
    {"text": "second done"},
]


async def test_two_sessions_at_once(start: Starter, tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", SLEEPS),
                         args=["--permission-mode", "bypass"])
    a = asyncio.ensure_future(client.call("openprogram/chat", {"text": "one"}))
    b = asyncio.ensure_future(client.call("openprogram/chat", {"text": "two"}))
    ra, rb = await asyncio.gather(a, b)
    assert ra["status"] == rb["status"] == "done"
    assert ra["sessionId"] != rb["sessionId"]
    order = [(e["type"], e["sessionId"]) for e in client.events
             if e["type"] in ("tool.started", "turn.finished")]
    first_finish = next(i for i, (t, _) in enumerate(order) if t == "turn.finished")
    started = {sid for t, sid in order[:first_finish] if t == "tool.started"}
    assert started == {ra["sessionId"], rb["sessionId"]}  # both ran before either finished


SLOW = [{"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 30"}}]},
        {"text": "stopped early"}]


async def test_busy_session_is_refused_and_steer_interjects(start: Starter,
                                                           tmp_path: Path) -> None:
    client = await start(model=write_script(tmp_path / "s.json", SLOW),
                         args=["--permission-mode", "bypass"])
    pending = asyncio.ensure_future(client.call("openprogram/chat", {"text": "sleep"}))
    started = await client.wait_event("tool.started")
    sid = started["sessionId"]
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/chat", {"text": "again", "sessionId": sid})
    assert info.value.code == -32002
    assert "steer" in info.value.message
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/checkout", {"sessionId": sid,
                                                   "headId": started["turnId"]})
    assert info.value.code == -32002
    with pytest.raises(JsonRpcException) as info:  # a restore would mix into the running turn
        await client.call("openprogram/restore", {"checkpointId": "c000000000"})
    assert info.value.code == -32002 and "running" in info.value.message
    assert await client.call("openprogram/steer", {"sessionId": sid,
                                                   "text": "stop"}) == {"accepted": True}
    await client.call("openprogram/cancel", {"sessionId": sid})
    result = await asyncio.wait_for(pending, 10)
    assert result["status"] == "cancelled"
    assert await client.call("openprogram/steer", {"sessionId": sid,
                                                   "text": "late"}) == {"accepted": False}
