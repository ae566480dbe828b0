"""A turn that ends while the first walk runs (``defer_turn``, pending.py): the turn's end does
not wait; its baseline and checkpoint are committed once the walk is done, from the states
captured at its end, and are the ones a store that waited records (trees, modes, empty
directories, listed files). What changes after the turn's end is never the turn's; whatever
needs the checkpoints waits for them; a process that dies first leaves a record the next one
commits."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from openprogram_lsp.core.types import Checkpoint
from openprogram_lsp.store.checkpoints import stage
from openprogram_lsp.store.checkpoints import store as store_mod
from openprogram_lsp.store.checkpoints.pending import DIR
from openprogram_lsp.store.checkpoints.store import CheckpointStore

from ._cp_helpers import files_of, open_store, tree_hash
from .test_checkpoints_deferred import WAIT, WRITES, _edit, _held, _recorded, _workspace


@pytest.fixture(autouse=True)
def _small_is_big(monkeypatch: pytest.MonkeyPatch) -> None:
    """These small workspaces count as big ones (whose first walk a turn's end never waits
    for); a workspace of a few files waits its short walk (the next test)."""
    monkeypatch.setattr(store_mod, "DEFER_TURN_ENTRIES", 5)


TURN_FILES = {("docs/readme.md", "deleted"), ("link", "modified"), ("new/deep/b.txt", "added"),
              ("src/main.py", "modified"), ("run.sh", "modified")}


def _waited(tmp_path: Path) -> CheckpointStore:
    ws = _workspace(tmp_path / "waited")
    store = open_store(ws, tmp_path / "home-waited")
    assert store.ensure_baseline("s") is not None
    _edit(ws)
    store.note_paths(WRITES)
    assert store.commit_turn("s", "t1", "turn") is not None
    return store


def _turn_during_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      ) -> tuple[Path, CheckpointStore, threading.Event]:
    """A store whose first walk is held; the session's turn edits (baseline deferred)."""
    ws = _workspace(tmp_path / "pending")
    store = open_store(ws, tmp_path / "home-pending")
    go = _held(store, monkeypatch)
    assert store.defer_baseline("s") and store.record_before("s", WRITES)
    _edit(ws)
    store.note_paths(WRITES)
    return ws, store, go


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "general"])
def test_a_turn_ended_during_the_walk_is_committed_after_it_as_a_waited_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk: bool) -> None:
    monkeypatch.setattr(stage, "BULK_ADD", 1 if bulk else 10**9)
    waited = _waited(tmp_path)
    ws, store, go = _turn_during_walk(tmp_path, monkeypatch)
    done: list[Checkpoint | None] = []
    cid = store.defer_turn("s", "t1", "turn", WRITES, done.append)
    assert cid is not None and not done  # returned with the walk still held
    records = list((store.root / DIR).iterdir())
    assert len(records) == 1 and json.loads(records[0].read_text())["checkpoint_id"] == cid
    (ws / "src" / "main.py").write_text("changed again after the turn\n")  # not the turn's
    store.note_paths(["src/main.py"])
    go.set()
    assert store.wait_pending(WAIT)
    assert len(done) == 1 and done[0] is not None and done[0].id == cid
    assert files_of(done[0]) == TURN_FILES
    assert _recorded(store) == _recorded(waited)
    assert not list((store.root / DIR).iterdir())  # the record goes with its commit
    later = store.commit_turn("s", "t2", "next")  # what changed after the capture: noted
    assert later is not None and files_of(later) == {("src/main.py", "modified")}


def test_an_outside_change_after_the_turns_end_is_not_the_turns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, store, go = _turn_during_walk(tmp_path, monkeypatch)
    (ws / "docs" / "other.md").write_text("saved in the editor during the turn\n")
    store.note_paths(["docs/other.md"])  # noted before the end: the baseline's, as waiting
    cid = store.defer_turn("s", "t1", "turn", WRITES)
    assert cid is not None
    (ws / "src" / "util.py").write_text("saved in the editor after the turn\n")
    (ws / "late.txt").write_text("made after the turn\n")
    store.note_paths(["src/util.py", "late.txt"])
    go.set()
    turn = store.get(cid)  # waits for the walk and the pending commits
    assert files_of(turn) == TURN_FILES
    baseline = store.list("s")[1]
    assert baseline.kind == "baseline" and baseline.id == turn.parent_id
    later = store.commit_turn("s", "t2", "next")
    # each late change is in the baseline (the walk read it already) or the next checkpoint
    late = {p for p, _s in files_of(later)} if later is not None else set()
    assert late <= {"src/util.py", "late.txt"}
    assert {f.path for f in store.diff(cid).files} == {p for p, _s in TURN_FILES} - {"run.sh"}


def test_restore_undo_and_a_later_turn_wait_for_the_pending_checkpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, store, go = _turn_during_walk(tmp_path, monkeypatch)
    original_main = "print('hello')\n"
    cid = store.defer_turn("s", "t1", "turn", WRITES)
    assert cid is not None
    # a second turn of another session while the walk still runs: pending after the first
    assert store.defer_baseline("s2") and store.record_before("s2", ["src/util.py"])
    (ws / "src" / "util.py").write_text("by s2\n")
    store.note_paths(["src/util.py"])
    cid2 = store.defer_turn("s2", "t2", "second", ["src/util.py"])
    assert cid2 is not None
    results: list[object] = []
    undo = threading.Thread(target=lambda: results.append(store.undo(cid, session_id="s")))
    undo.start()  # waits for the walk, then for the two pending commits
    undo.join(0.3)
    assert undo.is_alive()
    go.set()
    undo.join(WAIT)
    assert not undo.is_alive() and results
    assert (ws / "src" / "main.py").read_text() == original_main
    assert (ws / "src" / "util.py").read_text() == "by s2\n"  # the second turn's stays
    listed = [(c.kind, c.session_id) for c in store.list()]
    assert listed == [("restore", "s"), ("turn", "s2"), ("baseline", "s2"), ("turn", "s"),
                      ("baseline", "s")]
    assert files_of(store.get(cid2)) == {("src/util.py", "modified")}


def test_a_turn_that_may_have_changed_anything_waits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _ws, store, go = _turn_during_walk(tmp_path, monkeypatch)
    monkeypatch.setattr(store_mod, "DEFER_TURN_ENTRIES", 30)
    store._many = None
    assert store.defer_turn("s", "t1", "turn", WRITES) is None  # a walk of 14 entries
    monkeypatch.setattr(store_mod, "DEFER_TURN_ENTRIES", 5)
    store._many = None
    assert store.defer_turn("s", "t1", "turn", ["src"]) is None  # a directory
    store.note_all()  # a command ran
    assert store.defer_turn("s", "t1", "turn", WRITES) is None
    go.set()
    assert store.wait_prepared(WAIT)
    assert store.defer_turn("s", "t1", "turn", WRITES) is None  # no walk runs
    turn = store.commit_turn("s", "t1", "turn", full_scan=True)
    assert turn is not None and files_of(turn) >= TURN_FILES - {("run.sh", "modified")}


CRASH = """
import os, sys
from pathlib import Path
from openprogram_lsp.store.checkpoints import CheckpointConfig, CheckpointStore
from openprogram_lsp.store.checkpoints import store as store_mod
store_mod.DEFER_TURN_ENTRIES = 5  # a small workspace taken for a big one
ws, home = Path(sys.argv[1]), Path(sys.argv[2])
store = CheckpointStore(ws, home=home, config=CheckpointConfig())
store._walk_in_background = lambda: None  # the walk never ends in this process
assert store.defer_baseline("s") and store.record_before("s", sys.argv[3:])
exec(sys.stdin.read())  # the turn's writes
store.note_paths(sys.argv[3:])
assert store.defer_turn("s", "t1", "turn", sys.argv[3:]) is not None
os._exit(0)  # killed before the walk ends
"""


def test_a_process_that_dies_before_the_walk_leaves_a_record_the_next_one_commits(
        tmp_path: Path) -> None:
    waited = _waited(tmp_path)
    ws = _workspace(tmp_path / "crashed")
    home = tmp_path / "home-crashed"
    body = "\n".join(line[4:] for line in inspect.getsource(_edit).splitlines()[3:])
    script = "import os\nfrom pathlib import Path\nws = Path(sys.argv[1])\n" + body
    subprocess.run([sys.executable, "-c", CRASH, str(ws), str(home), *WRITES], input=script,
                   text=True, check=True, timeout=60)
    store = open_store(ws, home)
    assert len(list((store.root / DIR).iterdir())) == 1
    assert _recorded(store) == _recorded(waited)  # the next process's first read commits it
    assert not list((store.root / DIR).iterdir())
    assert tree_hash(ws) == tree_hash(waited.workspace)
    assert os.path.exists(ws / "new" / "deep" / "b.txt")


def test_a_walk_stopped_at_shutdown_leaves_the_turn_to_the_next_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server stops (its walk cancelled at its first report of hashed files): the pending
    checkpoint is not committed by a walk at exit; its record is, by the next process."""
    monkeypatch.setattr(stage, "BULK_ADD", 1)
    ws = _workspace(tmp_path)
    for n in range(2500):
        (ws / "src" / f"f{n}.txt").write_text(f"{n}\n")
    store = open_store(ws, tmp_path / "home")
    go, cancel = threading.Event(), threading.Event()

    def shutting_down(done: int, total: int) -> None:
        cancel.set()

    def held() -> None:
        assert go.wait(WAIT)
        try:
            assert not store.prepare(shutting_down, cancel)
        finally:
            store._idle.set()

    monkeypatch.setattr(store, "_walk_in_background", held)
    assert store.defer_baseline("s") and store.record_before("s", WRITES)
    _edit(ws)
    store.note_paths(WRITES)
    cid = store.defer_turn("s", "t1", "turn", WRITES)
    assert cid is not None
    go.set()
    assert store._settler is not None
    store._settler.join(WAIT)
    assert not store._settler.is_alive() and store.repo.head() is None  # nothing walked
    (record,) = (store.root / DIR).iterdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    record.rename(record.with_name(f"{gone.pid}-{record.name.split('-', 1)[1]}"))
    after = open_store(ws, tmp_path / "home")  # the next process's store
    assert files_of(after.get(cid)) == TURN_FILES
    assert [c.kind for c in after.list("s")] == ["turn", "baseline"]
    assert not list((after.root / DIR).iterdir())
