"""Odd bytes and sizes over the real transport: lone surrogates and huge fields answer -32602
naming the field, a model's lone surrogate never leaves a turn unsaveable, and an unusable
state root answers ``initialize`` with the reason."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests import forkserver
from tests.lsp.conftest import SERVER, Starter, write_script

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


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def test_an_unusable_state_root_answers_initialize_with_the_reason(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env["OPENPROGRAM_HOME"] = str(blocker / "home")  # root can write anywhere: use a file
    forked = forkserver.launcher()  # the fork client: the server on these very pipes
    command = [forked, "serve"] if forked else [*SERVER]
    proc = subprocess.run(
        command, input=_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"processId": None, "rootUri": None,
                                            "capabilities": {}}})
        + _frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        + _frame({"jsonrpc": "2.0", "method": "exit"}),
        capture_output=True, env=env, timeout=120, check=False)
    head, _, body = proc.stdout.partition(b"\r\n\r\n")
    answer = json.loads(body[:int(head.split(b":")[1])])
    assert answer["id"] == 1 and answer["error"]["code"] == -32005, answer
    assert "OPENPROGRAM_HOME" in answer["error"]["message"]
    assert str(blocker) in answer["error"]["message"]
    assert b"Traceback" not in proc.stderr
