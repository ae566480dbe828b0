"""#31: an agent edit into an editor buffer with unsaved changes is part of the turn, over the
real transport (a plain pytest-lsp client with workspace/applyEdit): checkpointed (the buffer
before and after), listed, diffed, undone and redone through the buffer with the user's unsaved
line kept, on disk once the buffer is closed, and blamed on the agent once saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.conftest import OpClient, Starter, write_script
from tests.lsp.docs_helpers import Editor, with_editor

DISK = "def f():\n    return 1\n"
USER = "def f():\n    return 1\n# mine, unsaved\n"
AGENT = "def f():\n    return 2\n# mine, unsaved\n"


async def _setup(start: Starter, tmp_path: Path, workspace: Path,
                 tool: str = "edit_file") -> tuple[OpClient, Editor, str, dict[str, Any]]:
    target = workspace / "m.py"
    target.write_text(DISK, "utf-8")
    args = {"path": "m.py", "old_text": "return 1", "new_text": "return 2"} \
        if tool == "edit_file" else {"path": "m.py", "content": AGENT}
    script = [{"tool_calls": [{"name": tool, "arguments": args}]}, {"text": "done"}]
    editors: list[Editor] = []
    client = await start(model=write_script(tmp_path / "s.json", script),
                         setup=with_editor(editors), apply_edit=True,
                         args=["--permission-mode", "accept-edits"])
    ed = editors[0]
    uri = ed.open(target)
    ed.edit(uri, (2, 0), (2, 0), "# mine, unsaved\n")
    result = await client.call("openprogram/chat", {"text": "bump"})
    assert result["status"] == "done", result
    assert ed.text[uri] == AGENT and target.read_text("utf-8") == DISK
    return client, ed, uri, result


async def test_a_buffer_edit_is_checkpointed_and_undone_through_the_buffer(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    client, ed, uri, result = await _setup(start, tmp_path, workspace)
    turn = result["checkpoint"]
    assert turn is not None, "no checkpoint for an edit into an unsaved buffer"
    assert turn["files"] == [{"path": "m.py", "status": "modified", "unsaved": True}]
    listed = await client.call("openprogram/checkpoints", {"sessionId": result["sessionId"]})
    kinds = [(c["kind"], c["message"].split(",")[0]) for c in listed["checkpoints"]][:2]
    assert kinds[0][0] == "turn" and kinds[1] == ("baseline",
                                                  "Unsaved changes in the editor's buffer of m.py")
    diff = await client.call("openprogram/checkpointDiff", {"checkpointId": turn["id"]})
    file = diff["files"][0]
    assert (file["before"], file["after"]) == (USER, AGENT)  # the agent's change, only
    # /undo: back into the buffer, the user's unsaved line kept, the disk untouched
    out = await client.call("openprogram/restore", {"checkpointId": turn["id"], "undo": True})
    assert out["restored"] == ["m.py"] and "notRestored" not in out, out
    assert ed.text[uri] == USER
    assert (workspace / "m.py").read_text("utf-8") == DISK
    listed = await client.call("openprogram/checkpoints", {"sessionId": result["sessionId"]})
    assert next(c for c in listed["checkpoints"] if c["id"] == turn["id"])["undoneBy"]
    # and redo it (Undo Restore): the agent's line is back in the buffer
    await client.call("openprogram/restore", {"checkpointId": out["safetyCheckpointId"]})
    assert ed.text[uri] == AGENT
    # saved: the agent's line is blamed on its turn, the user's on the user
    ed.save(workspace / "m.py")
    blame = await client.call("openprogram/blame", {"uri": uri})
    owner = {n: h for h in blame["hunks"]
             for n in range(h["startLine"], h["startLine"] + h["lineCount"])}
    assert owner[1]["kind"] == "agent" and owner[1]["turnId"] == result["assistantNodeId"]
    assert owner[2]["kind"] != "agent" and owner[0]["kind"] != "agent"


async def test_a_closed_buffer_is_undone_on_disk(start: Starter, tmp_path: Path,
                                                 workspace: Path) -> None:
    client, ed, uri, result = await _setup(start, tmp_path, workspace, tool="write_file")
    turn = result["checkpoint"]
    assert turn is not None
    ed.close(uri)  # thrown away unsaved: the disk is the state again
    out = await client.call("openprogram/restore", {"checkpointId": turn["id"], "undo": True})
    # the state before the agent's edit: what the user had in the buffer
    assert (workspace / "m.py").read_text("utf-8") == USER
    assert out["restored"] == ["m.py"]


async def test_a_hunk_of_a_buffer_edit_is_restored_in_the_buffer(
        start: Starter, tmp_path: Path, workspace: Path) -> None:
    client, ed, uri, result = await _setup(start, tmp_path, workspace)
    turn = result["checkpoint"]
    assert turn is not None
    out = await client.call("openprogram/restoreHunk",
                            {"checkpointId": turn["id"], "path": "m.py", "hunk": 0})
    assert out["restored"] == ["m.py"]
    assert ed.text[uri] == USER  # the agent's hunk out of the buffer, the user's line kept
    assert (workspace / "m.py").read_text("utf-8") == DISK
    await client.call("openprogram/restore", {"checkpointId": out["safetyCheckpointId"]})
    assert ed.text[uri] == AGENT  # and that is undoable
