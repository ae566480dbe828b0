"""Streamed text over stdio: joined into few notifications, the exact text, in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.conftest import OpClient, Starter, write_script

FIRST = "".join(f"word{i} é💡\n" for i in range(600))  # 7,800 characters: 975 deltas
SECOND = "All done: " + "ok " * 300


async def test_streamed_text_is_joined_exact_and_never_overtaken(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    model = write_script(tmp_path / "script.json", [
        {"text": FIRST, "tool_calls": [{"name": "write_file", "arguments": {
            "path": "a.txt", "content": "a\n"}}]},
        {"text": SECOND}])

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            return {"outcome": "selected", "optionId": "allow_once"}

    client = await start(model=model, setup=setup)
    result = await client.call("openprogram/chat", {"text": "write a.txt"})
    assert result["status"] == "done", result
    assert (workspace / "a.txt").read_text() == "a\n"
    tid = client.of_type("turn.started")[-1]["turnId"]
    turn = [e for e in client.events if e.get("turnId") == tid]
    kinds = [e["type"] for e in turn]
    started, finished = kinds.index("tool.started"), kinds.index("tool.finished")
    before = "".join(e["data"]["text"] for e in turn[:started] if e["type"] == "text.delta")
    after = "".join(e["data"]["text"] for e in turn[finished:] if e["type"] == "text.delta")
    assert before == FIRST  # all of it before the tool card: nothing overtook it
    assert after == SECOND
    assert "text.delta" not in kinds[started:finished]
    assert kinds[-1] == "turn.finished"
    deltas = kinds.count("text.delta")
    assert 2 <= deltas < 100, deltas  # the scripted model sent 975 + 38 deltas
    assert result["text"].endswith(SECOND)
