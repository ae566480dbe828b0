"""Checkpoints through the dispatcher: write_file, edit_file and run_command turns (real git)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.store._cp_helpers import dir_fingerprint, files_of, sh, tree_hash

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event


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
