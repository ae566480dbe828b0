"""Unsaved editor buffers in checkpoints (#31): an agent edit into a buffer with unsaved changes
is a change of the turn's checkpoint (before: the user's unsaved text, after: the agent's),
listed, diffed, undone and redone through the buffer while it stays unsaved, and on disk once it
is closed. (The editor side, real: tests/lsp/test_buffer_checkpoints.py and Neovim's.)"""

from __future__ import annotations

from pathlib import Path

from tests.store._cp_helpers import make_workspace, open_store

from openprogram_lsp.store.checkpoints import CheckpointStore


class Editor:
    """An editor's open documents, as the restore's BufferSink sees them."""

    def __init__(self, ws: Path) -> None:
        self.ws = ws
        self.docs: dict[str, str] = {}
        self.applied: list[tuple[str, str]] = []

    def unsaved(self, rel: str) -> str | None:
        text = self.docs.get(rel)
        disk = self.ws / rel
        on_disk = disk.read_text() if disk.is_file() else None
        return None if text is None or text == on_disk else text

    def apply(self, rel: str, old: str, new: str) -> str:
        if self.docs.get(rel) != old:
            return "the buffer changed"
        self.docs[rel] = new
        self.applied.append((rel, new))
        return ""

    def current(self, rel: str):  # type: ignore[no-untyped-def]
        return lambda: self.unsaved(rel)


USER = "def f():\n    return 1\n# the user's unsaved line\n"
AGENT = "def f():\n    return 2\n# the user's unsaved line\n"


def _agent_edits_buffer(store: CheckpointStore, editor: Editor) -> str:
    """The dispatcher's steps for an agent edit into a dirty buffer; returns the turn's id."""
    assert store.ensure_baseline("s") is not None
    editor.docs["src/util.py"] = USER  # typed, not saved
    before = store.record_buffer("s", "src/util.py", editor.current("src/util.py"))
    assert before is not None and before.kind == "baseline"
    assert [(f.path, f.unsaved) for f in before.files] == [("src/util.py", True)]
    editor.docs["src/util.py"] = AGENT  # workspace/applyEdit
    store.note_paths(["src/util.py"])
    turn = store.commit_turn("s", "t1", "edit util")
    assert turn is not None
    assert [(f.path, f.status, f.unsaved) for f in turn.files] == [
        ("src/util.py", "modified", True)]
    return turn.id


def test_a_buffer_edit_is_the_turns_change_and_undo_goes_through_the_buffer(
        tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=True)
    store = open_store(ws, tmp_path / "home")
    editor = Editor(ws)
    turn = _agent_edits_buffer(store, editor)
    diff = store.diff(turn)
    assert "-    return 1" in diff.diff and "+    return 2" in diff.diff
    assert "the user's unsaved line" not in "".join(
        ln for ln in diff.diff.splitlines(True) if ln[:1] in "+-" and ln[:3] not in "+++---")
    out = store.undo(turn, buffers=editor)
    assert editor.docs["src/util.py"] == USER  # the user's unsaved line stays
    assert (ws / "src/util.py").read_text() == "def f():\n    return 1\n"  # disk untouched
    assert out.restored == ["src/util.py"] and not out.not_restored
    store.restore(out.safety_checkpoint_id, buffers=editor)  # redo
    assert editor.docs["src/util.py"] == AGENT
    # saved: the disk now holds it and nothing new is recorded
    (ws / "src/util.py").write_text(AGENT)
    store.note_paths(["src/util.py"])
    assert store.commit_turn("s", "t2", "nothing") is None


def test_a_closed_buffer_is_restored_on_disk(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    editor = Editor(ws)
    turn = _agent_edits_buffer(store, editor)
    del editor.docs["src/util.py"]  # closed without saving: the disk is the state again
    out = store.undo(turn, buffers=editor)
    assert (ws / "src/util.py").read_text() == USER  # the state before the agent's edit
    assert editor.applied == [] and out.restored == ["src/util.py"]


def test_typing_after_the_edit_is_never_lost(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    editor = Editor(ws)
    turn = _agent_edits_buffer(store, editor)
    editor.docs["src/util.py"] = AGENT + "# typed after the turn\n"
    out = store.undo(turn, buffers=editor)
    # the safety checkpoint holds the typing, so the undo went ahead and is undoable
    assert editor.docs["src/util.py"] == USER
    store.restore(out.safety_checkpoint_id, buffers=editor)
    assert editor.docs["src/util.py"] == AGENT + "# typed after the turn\n"


def test_a_buffer_edit_does_not_take_the_turns_earlier_disk_edits(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    editor = Editor(ws)
    assert store.ensure_baseline("s") is not None
    (ws / "docs/readme.md").write_text("# by the agent, on disk\n")
    store.note_paths(["docs/readme.md"])
    editor.docs["src/util.py"] = USER
    store.record_buffer("s", "src/util.py", editor.current("src/util.py"))
    editor.docs["src/util.py"] = AGENT
    store.note_paths(["src/util.py"])
    turn = store.commit_turn("s", "t1", "m")
    assert turn is not None
    assert {f.path for f in turn.files} == {"docs/readme.md", "src/util.py"}


def test_a_buffer_with_a_lone_surrogate_is_still_checkpointed(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    editor = Editor(ws)
    assert store.ensure_baseline("s") is not None
    editor.docs["src/util.py"] = "x = '\ud800'\n"  # what a hostile client can put in a buffer
    cp = store.record_buffer("s", "src/util.py", editor.current("src/util.py"))
    assert cp is not None and [f.path for f in cp.files] == ["src/util.py"]
