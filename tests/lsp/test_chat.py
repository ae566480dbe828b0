"""Chat turns over stdio: approvals through both paths, questions, events, progress."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.conftest import OpClient, Starter, write_script

WRITE = [
    {"text": "Writing the file.",
     "tool_calls": [{"name": "write_file", "arguments": {"path": "hello.txt",
                                                          "content": "hello\n"}}]},
    {"text": "Done."},
]


async def test_chat_with_request_permission(start: Starter, tmp_path: Path,
                                            workspace: Path) -> None:
    model = write_script(tmp_path / "script.json", WRITE)

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "allow_once"}

    client = await start(model=model, setup=setup)
    result = await client.call("openprogram/chat", {"text": "write hello.txt"})
    assert result["status"] == "done", result
    assert (workspace / "hello.txt").read_text() == "hello\n"
    [request] = client.permission_requests
    assert request["toolCall"]["name"] == "write_file"
    assert request["toolCall"]["kind"] == "edit"
    assert request["toolCall"]["diff"]["path"] == "hello.txt"
    assert {o["kind"] for o in request["options"]} == {
        "allow_once", "allow_always", "reject_once", "reject_always"}
    kinds = [e["type"] for e in client.events if e["sessionId"] == result["sessionId"]]
    for expected in ("turn.started", "text.delta", "tool.started", "tool.finished",
                     "turn.finished"):
        assert expected in kinds
    finished = client.of_type("turn.finished")[-1]["data"]
    assert finished["status"] == "done"
    assert finished["sessionId"] == result["sessionId"]


async def test_chat_with_show_message_request(start: Starter, tmp_path: Path,
                                              workspace: Path) -> None:
    model = write_script(tmp_path / "script.json", WRITE)

    def setup(client: OpClient) -> None:
        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def _ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            client.message_requests.append(params)
            return next(a for a in params.actions or [] if a.title == "Allow once")

    client = await start(model=model, experimental=False, setup=setup)
    result = await client.call("openprogram/chat", {"text": "write hello.txt"})
    assert result["status"] == "done", result
    assert (workspace / "hello.txt").read_text() == "hello\n"
    [request] = client.message_requests
    assert "write_file" in request.message or "hello.txt" in request.message
    assert [a.title for a in request.actions or []] == [
        "Allow once", "Always allow", "Reject", "Always reject"]
