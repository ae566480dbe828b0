"""Checkpoints over stdio: list, diff, restore (which emits file.changed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Starter, write_script

EDIT = [
    {"tool_calls": [{"name": "write_file",
                     "arguments": {"path": "notes.txt", "content": "second\n"}}]},
    {"text": "Edited."},
]


async def test_checkpoints_diff_and_restore(start: Starter, tmp_path: Path,
                                            workspace: Path) -> None:
    (workspace / "notes.txt").write_text("first\n")
    client = await start(model=write_script(tmp_path / "s.json", EDIT),
                         args=["--permission-mode", "bypass"])
    result = await client.call("openprogram/chat", {"text": "edit notes"})
    assert result["status"] == "done"
    assert (workspace / "notes.txt").read_text() == "second\n"
    turn_cp = result["checkpoint"]
    assert turn_cp is not None
    assert {"path": "notes.txt", "status": "modified"} in turn_cp["files"]

    listed = (await client.call("openprogram/checkpoints", {}))["checkpoints"]
    assert listed[0]["id"] == turn_cp["id"]
    mine = (await client.call("openprogram/checkpoints",
                              {"sessionId": result["sessionId"]}))["checkpoints"]
    assert turn_cp["id"] in {c["id"] for c in mine}

    diff = await client.call("openprogram/checkpointDiff", {"checkpointId": turn_cp["id"]})
    assert diff["checkpointId"] == turn_cp["id"]
    assert "-first" in diff["diff"] and "+second" in diff["diff"]
    assert [f["path"] for f in diff["files"]] == ["notes.txt"]

    restored = await client.call("openprogram/restore", {"checkpointId": turn_cp["parentId"],
                                                         "paths": ["notes.txt"]})
    assert restored["restored"] == ["notes.txt"]
    assert restored["safetyCheckpointId"]
    assert (workspace / "notes.txt").read_text() == "first\n"
    await client.wait_event("file.changed", lambda e: e["data"]["changes"] == [
        {"path": "notes.txt", "change": "modified"}])

    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/checkpointDiff", {"checkpointId": "0" * 40})
    assert info.value.code == -32001
