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


HUNKS = [
    {"tool_calls": [{"name": "write_file", "arguments": {
        "path": "code.py", "content": "one\nTWO\nthree\nfour\nfive\nSIX\nseven\n"}}]},
    {"text": "Edited."},
]


async def test_restore_one_hunk_keeps_the_others_and_is_undoable(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    (workspace / "code.py").write_text("one\ntwo\nthree\nfour\nfive\nsix\nseven\n")
    (workspace / "code.py").chmod(0o640)
    client = await start(model=write_script(tmp_path / "s.json", HUNKS),
                         args=["--permission-mode", "bypass"])
    result = await client.call("openprogram/chat", {"text": "edit code"})
    cp = result["checkpoint"]["id"]
    diff = await client.call("openprogram/checkpointDiff", {"checkpointId": cp})
    hunks = diff["files"][0]["hunks"]
    assert [(h["newStart"], h["newLines"]) for h in hunks] == [(2, 1), (6, 1)]

    out = await client.call("openprogram/restoreHunk",
                            {"checkpointId": cp, "path": "code.py", "hunk": 1})
    assert out["restored"] == ["code.py"] and out["safetyCheckpointId"]
    assert (workspace / "code.py").read_text() == "one\nTWO\nthree\nfour\nfive\nsix\nseven\n"
    assert (workspace / "code.py").stat().st_mode & 0o777 == 0o640
    await client.wait_event("file.changed", lambda e: e["data"]["changes"] == [
        {"path": "code.py", "change": "modified"}])
    # the hunk restore is itself undone by restoring its safety checkpoint
    await client.call("openprogram/restore", {"checkpointId": out["safetyCheckpointId"]})
    assert (workspace / "code.py").read_text() == "one\nTWO\nthree\nfour\nfive\nSIX\nseven\n"

    (workspace / "code.py").write_text("rewritten by the user\n")
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/restoreHunk",
                          {"checkpointId": cp, "path": "code.py", "hunk": 0})
    assert info.value.code == -32002 and "no longer applies" in info.value.message
    assert (workspace / "code.py").read_text() == "rewritten by the user\n"
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/restoreHunk",
                          {"checkpointId": cp, "path": "other.py", "hunk": 0})
    assert info.value.code == -32001


TWO_FILES = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt",
                                                         "content": "second\n"}}]},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "new.txt", "content": "n\n"}}]},
    {"text": "Edited."},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "later.txt",
                                                         "content": "l\n"}}]},
    {"text": "Later."},
]


async def test_restore_with_undo_returns_a_turns_files_in_one_undoable_step(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("first\n")
    client = await start(model=write_script(tmp_path / "s.json", TWO_FILES),
                         args=["--permission-mode", "bypass"])
    first = await client.call("openprogram/chat", {"text": "edit two files"})
    later = await client.call("openprogram/chat", {"text": "one more",
                                                   "sessionId": first["sessionId"]})
    cp = first["checkpoint"]["id"]
    out = await client.call("openprogram/restore", {"checkpointId": cp, "undo": True})
    assert sorted(out["restored"]) == ["new.txt", "notes.txt"]
    assert out["undoneCheckpointId"] == cp
    assert out["restoredFromCheckpointId"] == first["checkpoint"]["parentId"]
    assert (workspace / "notes.txt").read_text() == "first\n"
    assert not (workspace / "new.txt").exists()
    assert (workspace / "later.txt").exists()  # a later turn's file stays
    await client.wait_event("file.changed", lambda e: {"path": "new.txt", "change": "deleted"}
                            in e["data"]["changes"])

    async def undone_by() -> dict[str, str | None]:
        listed = (await client.call("openprogram/checkpoints",
                                    {"sessionId": first["sessionId"]}))["checkpoints"]
        return {c["id"]: c.get("undoneBy") for c in listed if c["kind"] == "turn"}

    # the server knows the turn is undone (whoever undid it), the later one is not
    assert out["checkpointId"]
    assert await undone_by() == {cp: out["checkpointId"], later["checkpoint"]["id"]: None}
    redo = await client.call("openprogram/restore", {"checkpointId": out["safetyCheckpointId"]})
    assert sorted(redo["restored"]) == ["new.txt", "notes.txt"]
    assert (workspace / "notes.txt").read_text() == "second\n"
    # the undo taken back: the turn is not undone any more
    assert await undone_by() == {cp: None, later["checkpoint"]["id"]: None}

    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/restore", {"checkpointId": cp, "undo": True,
                                                  "paths": ["notes.txt"]})
    assert info.value.code == -32602 and "paths" in str(info.value)
    baseline = first["checkpoint"]["parentId"]
    with pytest.raises(JsonRpcException) as info:
        await client.call("openprogram/restore", {"checkpointId": baseline, "undo": True})
    assert info.value.code == -32030 and "not a turn's" in str(info.value)
