"""Odd bytes and sizes over the real transport: lone surrogates and huge fields answer -32602
naming the field, and a model's lone surrogate never leaves a turn unsaveable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Starter, write_script

BAD: list[tuple[str, dict[str, Any], str]] = [
    ("openprogram/chat", {"text": "hi", "model": "\udcff"}, "model"),
    ("openprogram/chat", {"text": "caf\ud800"}, "text"),
    ("openprogram/answer", {"questionId": "q1", "answer": "\udcff"}, "answer"),
    ("openprogram/renameSession", {"sessionId": "s1", "title": "x\udc80"}, "title"),
    ("openprogram/checkpointDiff", {"checkpointId": "c0123456", "path": "a" * 10_000_000},
     "path"),
]


async def test_lone_surrogates_and_huge_fields_answer_invalid_params(start: Starter) -> None:
    client = await start(model="offline")
    for method, params, field in BAD:
        with pytest.raises(JsonRpcException) as info:
            await client.call(method, params)
        assert info.value.code == -32602, (method, info.value)
        assert field in info.value.message, (method, info.value.message)
    result = await client.call("openprogram/chat", {"text": "still alive"})
    assert result["status"] == "done"


async def test_a_model_sending_a_lone_surrogate_leaves_a_saved_turn(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    model = write_script(tmp_path / "odd.json", [
        {"text": "Writing caf\udce9.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "caf\udce9.txt", "content": "x\n"}}]},
        {"text": "Done with caf\udce9."},
        {"text": "next turn"},
    ])
    client = await start(init_options={"permissionMode": "bypass"})
    first = await client.call("openprogram/chat", {"text": "odd", "model": model})
    assert first["status"] in ("done", "error"), first
    sid = first["sessionId"]
    history = await client.call("openprogram/history", {"sessionId": sid})
    reply = next(n for n in history["nodes"] if n["id"] == first["assistantNodeId"])
    assert reply["status"] == first["status"]  # stored, not left running
    assert "\ufffd" in reply["text"]  # the lone surrogate became U+FFFD in the store
    again = await client.call("openprogram/chat", {"text": "and now", "sessionId": sid,
                                                   "model": model})
    assert again["status"] == "done" and again["text"] == "next turn"
