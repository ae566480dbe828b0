"""A baseline taken after the turn began editing (``defer_baseline``, deferred.py): the first
edit does not wait for the first walk, and the checkpoints recorded are exactly those of a
store whose first edit waited (trees, modes, empty directories, listed changes), so an undo
puts back what was there before the turn."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import EventBus
from openprogram_lsp.store.checkpoints import stage
from openprogram_lsp.store.checkpoints.store import CheckpointStore

from ._cp_helpers import files_of, make_workspace, open_store, tree_hash

WAIT = 30.0
WRITES = ["src/main.py", "run.sh", "new/deep/b.txt", "docs/readme.md", "notes.log",
          "link"]


def _workspace(root: Path) -> Path:
    ws = make_workspace(root, git=False)
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o700)
    (ws / "notes.log").write_text("ignored\n")
    (ws / "keep").mkdir()  # an empty directory
    os.symlink("src/util.py", ws / "link")
    return ws


def _edit(ws: Path) -> None:
    """The turn's writes: a change, a mode change, a new file in new directories, a removal,
    an ignored file, a symlink retargeted."""
    (ws / "src" / "main.py").write_text("print('edited')\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "new" / "deep").mkdir(parents=True)
    (ws / "new" / "deep" / "b.txt").write_text("new\n")
    (ws / "docs" / "readme.md").unlink()
    (ws / "notes.log").write_text("changed too\n")
    (ws / "link").unlink()
    os.symlink("src/main.py", ws / "link")


def _held(store: CheckpointStore, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold the background walk the deferral starts until the returned event is set."""
    go = threading.Event()
    walk = store._walk_in_background

    def held() -> None:
        assert go.wait(WAIT)
        walk()

    monkeypatch.setattr(store, "_walk_in_background", held)
    return go


def _recorded(store: CheckpointStore) -> list[tuple[str, object, object]]:
    out = []
    for cp in store.list():
        head = next(e.commit for e in store._entries() if e.checkpoint is not None
                    and e.checkpoint.id == cp.id)
        out.append((cp.kind, store.tree_of(cp.id),
                    (store._modes_of(head), store._extras_of(head), sorted(files_of(cp)))))
    return out


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "general"])
def test_a_deferred_baseline_records_what_a_waited_one_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk: bool) -> None:
    monkeypatch.setattr(stage, "BULK_ADD", 1 if bulk else 10**9)
    waited_ws, deferred_ws = _workspace(tmp_path / "a"), _workspace(tmp_path / "b")
    original = tree_hash(deferred_ws)
    waited = open_store(waited_ws, tmp_path / "home-a")
    assert waited.ensure_baseline("s") is not None
    _edit(waited_ws)
    waited.note_paths(WRITES)
    assert waited.commit_turn("s", "t1", "turn") is not None

    store = open_store(deferred_ws, tmp_path / "home-b")
    go = _held(store, monkeypatch)
    assert not store.baseline_ready("s")
    assert store.defer_baseline("s")  # the walk is due: started, and the edit goes on
    assert not store.baseline_ready("s") and not store.wait_prepared(0)
    assert store.record_before("s", WRITES)
    _edit(deferred_ws)  # before the walk reads a single file: it sees only the after-states
    store.note_paths(WRITES)
    go.set()
    turn = store.commit_turn("s", "t1", "turn")  # waits for the walk, takes the baseline first
    assert turn is not None and turn.kind == "turn"
    assert _recorded(store) == _recorded(waited)
    assert files_of(turn) == {("docs/readme.md", "deleted"), ("link", "modified"),
                              ("new/deep/b.txt", "added"), ("src/main.py", "modified"),
                              ("run.sh", "modified")}
    baseline = store.list()[1]
    store.restore(baseline.id, session_id="s")  # undo the turn: the workspace as before it
    assert tree_hash(deferred_ws) == {**original, "notes.log": tree_hash(deferred_ws)["notes.log"]}
    assert (deferred_ws / "run.sh").stat().st_mode & 0o777 == 0o700
    assert not (deferred_ws / "new").exists() and (deferred_ws / "keep").is_dir()


@pytest.mark.parametrize("before", ["walked", "earlier-turn"])
def test_a_baseline_deferred_with_no_walk_to_wait_for_records_the_same(
        tmp_path: Path, before: str) -> None:
    """The first walk done (or an earlier session's turn checkpointed, and a change made
    outside the agent since): the edit's baseline is still deferred to the turn's checkpoint
    (no commit on the edit's way, no walk started), and the checkpoints are the same."""
    stores = []
    for name in ("waited", "deferred"):
        ws = _workspace(tmp_path / name)
        store = open_store(ws, tmp_path / f"home-{name}")
        assert store.prepare()
        if before == "earlier-turn":
            assert store.ensure_baseline("s0") is not None
            (ws / "src" / "util.py").write_text("by s0\n")
            store.note_paths(["src/util.py"])
            assert store.commit_turn("s0", "t0", "turn") is not None
            (ws / "outside.txt").write_text("made outside the agent\n")
            store.note_paths(["outside.txt"])
        stores.append((ws, store))
    (waited_ws, waited), (deferred_ws, store) = stores
    assert waited.ensure_baseline("s") is not None
    _edit(waited_ws)
    waited.note_paths(WRITES)
    assert waited.commit_turn("s", "t1", "turn") is not None

    assert not store.baseline_ready("s") and store.defer_baseline("s")
    assert store.wait_prepared(0)  # no walk started: nothing to wait for
    assert store.record_before("s", WRITES)
    _edit(deferred_ws)
    store.note_paths(WRITES)
    turn = store.commit_turn("s", "t1", "turn")
    assert turn is not None and turn.kind == "turn"
    assert _recorded(store) == _recorded(waited)
    assert store.baseline_ready("s")


def test_a_path_that_cannot_be_recorded_takes_the_baseline_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path)
    store = open_store(ws, tmp_path / "home", max_file_bytes=1024)
    go = _held(store, monkeypatch)
    assert store.defer_baseline("s") and store.defer_baseline("s")  # (asked again: still)
    assert not store.defer_baseline("other")  # one session's baseline at a time
    (ws / "big.bin").write_bytes(b"x" * 2048)
    assert store.record_before("s", ["src/main.py"])
    assert not store.record_before("s", ["big.bin"])  # over the size a checkpoint records
    assert not store.record_before("s", ["src"])  # a directory
    assert not store.record_before("s", ["../outside"])
    go.set()
    (ws / "src" / "main.py").write_text("edited\n")
    store.note_paths(["src/main.py"])
    cp = store.ensure_baseline("s")  # what the caller does then: the recorded path as it was
    assert cp is not None and cp.kind == "baseline"
    turn = store.commit_turn("s", "t1", "turn")
    assert turn is not None and ("src/main.py", "modified") in files_of(turn)



def test_a_file_swapped_after_its_stat_is_unrecordable_not_waited_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A racing process puts a fifo (an open would wait forever), a symlink or a longer file
    where ``record_before`` saw a small regular one: the path is unrecordable (the caller
    takes the baseline at once), never read as that file."""
    from openprogram_lsp.store.checkpoints import deferred

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "small").write_text("small\n")
    os.mkfifo(ws / "fifo")
    os.symlink("small", ws / "link")
    (ws / "grown").write_text("small\n and more\n")
    seen_as = os.lstat(ws / "small")
    real_lstat = os.lstat
    monkeypatch.setattr(deferred.os, "lstat",
                        lambda p: seen_as if os.path.basename(p) != "small" else real_lstat(p))
    held = deferred.DeferredBaseline("s")
    for rel in ("fifo", "link", "grown"):
        with pytest.raises(deferred.Unrecordable):
            held.record(str(ws), rel, 1024)
    held.record(str(ws), "small", 1024)
    assert held.before == {"small": ("100644", b"small\n")}

def test_a_turns_first_write_runs_before_the_first_walk(
        make_dispatcher: Callable[..., Dispatcher],
        script: Callable[[list[dict[str, object]]], str], workspace: Path, bus: EventBus,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the dispatcher: the write_file call finishes while the walk is still held
    (it would wait for it before), and the turn's checkpoints are exact once it ran."""
    (workspace / "main.py").write_text("x = 1\n")
    d = make_dispatcher(script([
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "main.py", "content": "x = 2\n"}},
            {"name": "write_file", "arguments": {"path": "pkg/new.py", "content": "y = 1\n"}}]},
        {"text": "Done."}]), permission_mode="bypass")
    store = d.checkpointer(workspace)
    assert isinstance(store, CheckpointStore)
    go, outwaited = threading.Event(), []
    walk = store._walk_in_background

    def held() -> None:
        if not go.wait(WAIT):
            outwaited.append(True)  # the edit waited for the walk: fail, without hanging
        walk()

    monkeypatch.setattr(store, "_walk_in_background", held)
    bus.subscribe(lambda e: go.set(), ["tool.finished"])  # the first: write_file
    result = d.process_user_turn(TurnRequest(text="write"))
    assert not outwaited and go.is_set()
    # the turn may end before the walk does: its checkpoint is then committed after it
    cid = result.checkpoint.id if result.checkpoint else result.checkpoint_pending
    assert cid is not None
    assert files_of(store.get(cid)) == {("main.py", "modified"), ("pkg/new.py", "added")}
    kinds = [c.kind for c in store.list(result.session_id)]
    assert kinds == ["turn", "baseline"]
    store.restore(store.list(result.session_id)[1].id)  # undo: main.py as it was
    assert (workspace / "main.py").read_text() == "x = 1\n"
    assert not (workspace / "pkg").exists()
