"""Checkpoint store: restore, its undo, and what restore must never touch (real git)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.store._cp_helpers import files_of, make_workspace, open_store, sh, tree_hash

from openprogram_lsp.core.errors import NotFound, WorkspaceEscape


@pytest.fixture(params=["git", "plain"])
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return make_workspace(tmp_path, git=request.param == "git")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _turn(store, ws: Path, tid: str, writes: dict[str, bytes | None]) -> str:  # type: ignore[no-untyped-def]
    for path, data in writes.items():
        full = ws / path
        if data is None:
            full.unlink()
        else:
            full.parent.mkdir(parents=True, exist_ok=True)
            full.write_bytes(data)
    store.note_paths(list(writes))
    cp = store.commit_turn("s", tid, tid)
    assert cp is not None
    return str(cp.id)


def test_restore_and_its_undo_round_trip(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    first = _turn(store, ws, "t1", {"a.txt": b"one\n", "src/main.py": b"v1\n"})
    state1 = tree_hash(ws)
    _turn(store, ws, "t2", {"a.txt": b"two\n", "b/c/d.txt": b"deep\n", "docs/readme.md": None,
                             "img.bin": b"\0\1\2" * 100})
    os.symlink("src/main.py", ws / "link")
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (ws / "run.sh").chmod(0o755)
    sh("echo by-shell > shell.txt", ws)
    store.note_all()  # what run_command reports: the safety checkpoint must walk and see it
    state2 = tree_hash(ws)

    out = store.restore(first)
    assert tree_hash(ws) == state1
    assert not (ws / "b").exists()  # directories emptied by the restore are removed
    assert set(out.restored) == {"a.txt", "b/c/d.txt", "docs/readme.md", "img.bin", "link",
                                 "run.sh", "shell.txt"}
    changes = {c.path: c.change for c in out.changes}
    assert changes["docs/readme.md"] == "added" and changes["a.txt"] == "modified"
    assert changes["shell.txt"] == "deleted"
    safety = store.get(out.safety_checkpoint_id)
    assert safety.kind == "safety" and ("shell.txt", "added") in files_of(safety)
    restored = store.get(out.checkpoint_id)
    assert restored.kind == "restore"

    undo = store.restore(out.safety_checkpoint_id)
    assert tree_hash(ws) == state2
    assert os.readlink(ws / "link") == "src/main.py"
    assert os.access(ws / "run.sh", os.X_OK)
    # undoing the undo goes back again
    store.restore(undo.safety_checkpoint_id)
    assert tree_hash(ws) == state1


def test_restore_writes_only_differing_files(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    first = _turn(store, ws, "t1", {"a.txt": b"one\n"})
    _turn(store, ws, "t2", {"a.txt": b"two\n", "new.txt": b"n\n"})
    old = 1_000_000_000
    keep = [ws / "src" / "main.py", ws / "src" / "util.py", ws / "docs" / "readme.md"]
    for path in keep:
        os.utime(path, (old, old))
    out = store.restore(first)
    assert sorted(out.restored) == ["a.txt", "new.txt"]
    assert all(p.stat().st_mtime == old for p in keep)
    assert (ws / "a.txt").read_text() == "one\n" and not (ws / "new.txt").exists()


def test_restore_some_paths_only(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    first = _turn(store, ws, "t1", {"a.txt": b"one\n", "d/x.txt": b"x1\n"})
    _turn(store, ws, "t2", {"a.txt": b"two\n", "d/x.txt": b"x2\n", "d/y.txt": b"y\n"})
    out = store.restore(first, ["d"])
    assert sorted(out.restored) == ["d/x.txt", "d/y.txt"]
    assert (ws / "a.txt").read_text() == "two\n"
    assert (ws / "d" / "x.txt").read_text() == "x1\n" and not (ws / "d" / "y.txt").exists()
    out = store.restore(first, [str(ws / "a.txt")])  # absolute paths inside are fine
    assert out.restored == ["a.txt"]


@pytest.mark.parametrize("bad", ["../outside.txt", "/etc/passwd", "a/../../x", ".git/config"])
def test_restore_refuses_paths_outside_the_workspace(ws: Path, home: Path, bad: str) -> None:
    store = open_store(ws, home)
    base = store.ensure_baseline("s")
    assert base is not None
    with pytest.raises(WorkspaceEscape):
        store.restore(base.id, [bad])


def test_restore_never_touches_ignored_or_unrecorded_files(ws: Path, home: Path) -> None:
    store = open_store(ws, home, max_file_bytes=1000)
    base = store.ensure_baseline("s")
    assert base is not None
    (ws / "debug.log").write_text("ignored, created after the baseline\n")
    (ws / "build").mkdir()
    (ws / "build" / "artifact").write_text("ignored\n")
    (ws / "huge.bin").write_bytes(b"h" * 5000)  # too big to record
    _turn(store, ws, "t1", {"a.txt": b"a\n"})
    store.restore(base.id)
    assert not (ws / "a.txt").exists()
    assert (ws / "debug.log").exists() and (ws / "build" / "artifact").exists()
    assert (ws / "huge.bin").read_bytes() == b"h" * 5000


def test_restore_does_not_overwrite_an_unrecorded_file(ws: Path, home: Path) -> None:
    store = open_store(ws, home, max_file_bytes=1000)
    store.ensure_baseline("s")
    with_small = _turn(store, ws, "t1", {"data.bin": b"small\n"})
    (ws / "data.bin").write_bytes(b"B" * 5000)  # now too big: not in the safety checkpoint
    store.note_all()
    store.commit_turn("s", "t2", "grew")
    out = store.restore(with_small)
    assert out.skipped == ["data.bin"]
    assert (ws / "data.bin").read_bytes() == b"B" * 5000


def test_restore_unknown_id(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    with pytest.raises(NotFound):
        store.restore("cnope")


def test_file_and_directory_swap(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    first = _turn(store, ws, "t1", {"thing": b"a file\n"})
    state1 = tree_hash(ws)
    (ws / "thing").unlink()
    (ws / "thing").mkdir()
    (ws / "thing" / "inner.txt").write_text("inside\n")
    store.note_paths(["thing"])
    second = store.commit_turn("s", "t2", "swap")
    assert second is not None
    assert files_of(second) == {("thing", "deleted"), ("thing/inner.txt", "added")}
    state2 = tree_hash(ws)
    out = store.restore(first)
    assert tree_hash(ws) == state1
    store.restore(out.safety_checkpoint_id)
    assert tree_hash(ws) == state2


def test_restore_of_the_current_state_changes_nothing(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    cp = _turn(store, ws, "t1", {"a.txt": b"a\n"})
    out = store.restore(cp)
    assert out.restored == [] and out.safety_checkpoint_id == cp
    assert out.checkpoint_id is None


def test_safety_checkpoint_rereads_paths_the_restore_overwrites(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    first = _turn(store, ws, "t1", {"a.txt": b"one\n"})
    _turn(store, ws, "t2", {"a.txt": b"two\n"})
    (ws / "a.txt").write_text("edited and never reported\n")
    out = store.restore(first)
    assert (ws / "a.txt").read_text() == "one\n"
    store.restore(out.safety_checkpoint_id)
    assert (ws / "a.txt").read_text() == "edited and never reported\n"


def test_restoring_the_newest_checkpoint_undoes_edits_not_reported_yet(ws: Path,
                                                                       home: Path) -> None:
    """The watcher reports an outside edit late: a restore right after it still sees it."""
    store = open_store(ws, home)
    store.ensure_baseline("s")
    cp = _turn(store, ws, "t1", {"a.txt": b"a\n", "b.txt": b"b\n"})
    (ws / "a.txt").write_text("edited, not reported\n")
    (ws / "b.txt").unlink()
    out = store.restore(cp)
    assert sorted(out.restored) == ["a.txt", "b.txt"]
    assert (ws / "a.txt").read_bytes() == b"a\n" and (ws / "b.txt").read_bytes() == b"b\n"
    store.restore(out.safety_checkpoint_id)  # the edit is in the safety checkpoint
    assert (ws / "a.txt").read_text() == "edited, not reported\n"
    assert not (ws / "b.txt").exists()


def test_first_restore_after_a_restart_walks_the_tree(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    first = _turn(store, ws, "t1", {"a.txt": b"one\n"})
    (ws / "while_down.txt").write_text("made while the server was not running\n")
    out = open_store(ws, home).restore(first)
    assert ("while_down.txt", "added") in files_of(store.get(out.safety_checkpoint_id))
    assert not (ws / "while_down.txt").exists()


def test_restore_never_writes_into_the_state_root(tmp_path: Path) -> None:
    """A checkpointed path that is now inside our own state (workspace = $HOME) is skipped."""
    from openprogram_lsp.core.fsutil import protect_dir

    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    state = ws / "state-root"
    (state / "rules").mkdir(parents=True)
    (state / "rules" / "allow-all.json").write_text('{"rules": "everything"}\n')
    first = store.commit_turn("s1", "t1", "turn 1", full_scan=True)
    assert first is not None
    (state / "rules" / "allow-all.json").unlink()
    protect_dir(state)  # from now on our stores live there
    result = store.restore(first.id, None, full_scan=True)
    assert "state-root/rules/allow-all.json" not in result.restored
    assert "state-root/rules/allow-all.json" in (result.skipped or [])
    assert not (state / "rules" / "allow-all.json").exists()


def test_an_undo_is_recorded_on_the_turn_until_it_is_restored_away(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    home = tmp_path / "home"
    store = open_store(ws, home)
    store.ensure_baseline("s")
    t1 = _turn(store, ws, "t1", {"a.txt": b"one\n"})
    t2 = _turn(store, ws, "t2", {"b.txt": b"two\n"})

    def undone() -> dict[str, str | None]:
        # read back from git by a fresh store, as another process (editor, CLI) sees it
        return {c.id: c.undone_by for c in open_store(ws, home).list() if c.kind == "turn"}

    assert undone() == {t1: None, t2: None}
    u2 = store.undo(t2)
    assert u2.checkpoint_id and undone() == {t1: None, t2: u2.checkpoint_id}
    u1 = store.undo(t1)
    assert undone() == {t1: u1.checkpoint_id, t2: u2.checkpoint_id}
    # Undo Restore of the newest undo brings t1 back; t2 stays undone
    assert u1.safety_checkpoint_id is not None
    store.restore(u1.safety_checkpoint_id, u1.restored)
    assert (ws / "a.txt").read_bytes() == b"one\n"
    assert undone() == {t1: None, t2: u2.checkpoint_id}
    # undoing t2 once more writes nothing (b.txt is gone already) and is still recorded
    again = store.undo(t2)
    assert again.restored == [] and again.checkpoint_id not in (None, u2.checkpoint_id)
    assert undone() == {t1: None, t2: again.checkpoint_id}
