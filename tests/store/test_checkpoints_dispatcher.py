"""Checkpoints through the dispatcher: write_file, edit_file and run_command turns (real git)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.store._cp_helpers import dir_fingerprint, files_of, sh, tree_hash

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from openprogram_lsp.store.checkpoints import store as store_mod


def _call(name: str, **arguments: object) -> dict[str, object]:
    return {"text": f"Calling {name}.", "tool_calls": [{"name": name, "arguments": arguments}]}


DONE = {"text": "Done."}


def test_each_tool_edit_lands_in_its_turn(make_dispatcher: Callable[..., Dispatcher],
                                          script: Callable[[list[dict[str, object]]], str],
                                          workspace: Path, events: list[Event]) -> None:
    (workspace / "main.py").write_text("x = 1\n")
    sh("git init -q -b main && git add -A && git commit -qm init", workspace)
    user_git = (sh("git status --porcelain", workspace), dir_fingerprint(workspace / ".git"))
    d = make_dispatcher(script([
        _call("write_file", path="notes.txt", content="hello\n"), DONE,
        _call("edit_file", path="main.py", old_text="x = 1", new_text="x = 2"), DONE,
        _call("run_command", command="echo shell > made.txt && rm notes.txt"), DONE,
        DONE,
    ]), permission_mode="bypass")
    one = d.process_user_turn(TurnRequest(text="write"))
    sid = one.session_id
    state_after_one = tree_hash(workspace)
    two = d.process_user_turn(TurnRequest(text="edit", session_id=sid))
    three = d.process_user_turn(TurnRequest(text="shell", session_id=sid))
    four = d.process_user_turn(TurnRequest(text="talk only", session_id=sid))
    assert one.checkpoint is not None and two.checkpoint is not None
    assert three.checkpoint is not None and four.checkpoint is None
    assert files_of(one.checkpoint) == {("notes.txt", "added")}
    assert files_of(two.checkpoint) == {("main.py", "modified")}
    assert files_of(three.checkpoint) == {("made.txt", "added"), ("notes.txt", "deleted")}
    for result in (one, two, three):
        assert result.checkpoint is not None
        assert result.checkpoint.session_id == sid and result.checkpoint.turn_id
        node = d.services.store.get_node(sid, result.assistant_node_id)
        assert node.metadata.get("checkpointId") == result.checkpoint.id
    created = [e for e in events if e.type == "checkpoint.created"]
    assert [e.payload["id"] for e in created] == [one.checkpoint.id, two.checkpoint.id,
                                               three.checkpoint.id]
    checkpointer = d.checkpointer(workspace)
    kinds = [c.kind for c in checkpointer.list(sid)]  # type: ignore[union-attr]
    assert kinds == ["turn", "turn", "turn", "baseline"]
    out = checkpointer.restore(one.checkpoint.id)  # type: ignore[union-attr]
    assert tree_hash(workspace) == state_after_one
    checkpointer.restore(out.safety_checkpoint_id)  # type: ignore[union-attr]
    assert (workspace / "made.txt").exists() and not (workspace / "notes.txt").exists()
    assert (sh("git status --porcelain", workspace).replace("?? made.txt\n", "")
            .replace(" M main.py\n", "")) == user_git[0]
    assert dir_fingerprint(workspace / ".git") == user_git[1]


def test_a_walk_during_a_tools_write_never_records_its_temp_file(
        make_dispatcher: Callable[..., Dispatcher],
        script: Callable[[list[dict[str, object]]], str], workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk a turn's first edit starts runs beside the turn's writes: here while
    write_file's temp file exists (made, not yet renamed). It is not the workspace's: no
    checkpoint holds it, so a later walk does not list it deleted, nor a restore bring it back."""
    (workspace / "main.py").write_text("x = 1\n")
    walks: list[Callable[[], None]] = []
    monkeypatch.setattr(store_mod._thread, "start_new_thread", lambda f, _a: walks.append(f))
    monkeypatch.setattr(store_mod, "WALK_AFTER_EDIT", 0)

    def opened(*args: object, **kwargs: object) -> object:  # (the temp file is made)
        while walks:
            walks.pop()()  # the walk, with the temp file in the folder
        return open(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(fdfs, "open", opened, raising=False)
    d = make_dispatcher(script([
        _call("write_file", path="notes.txt", content="hello\n"), DONE,
        _call("run_command", command="echo shell > made.txt"), DONE,
    ]), permission_mode="bypass")
    one = d.process_user_turn(TurnRequest(text="write"))
    assert not walks  # (the walk ran inside the write)
    two = d.process_user_turn(TurnRequest(text="shell", session_id=one.session_id))
    assert one.checkpoint is not None and two.checkpoint is not None
    assert files_of(one.checkpoint) == {("notes.txt", "added")}
    assert files_of(two.checkpoint) == {("made.txt", "added")}  # a full walk
    checkpointer = d.checkpointer(workspace)
    baseline = checkpointer.list(one.session_id)[-1]  # type: ignore[union-attr]
    checkpointer.restore(baseline.id)  # type: ignore[union-attr]
    assert sorted(p.name for p in workspace.iterdir()) == ["main.py"]
