"""The first walk taken ahead of the first checkpoint (``CheckpointStore.prepare``): the
checkpoints that follow are exactly those a store without it records, edits made while it runs
included, and a checkpoint asked for meanwhile waits for it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from openprogram_lsp.core.types import Checkpoint
from openprogram_lsp.store.checkpoints import stage

from ._cp_helpers import make_workspace, open_store, tree_hash

WAIT = 30.0  # bound on every wait; far above what each needs


def _files(cp: Checkpoint | None) -> list[tuple[str, str]]:
    assert cp is not None
    return sorted((f.status, f.path) for f in cp.files)


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "general"])
def test_a_prepared_store_records_what_an_unprepared_one_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk: bool) -> None:
    monkeypatch.setattr(stage, "BULK_ADD", 1 if bulk else 10**9)
    ws = make_workspace(tmp_path, git=True)
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    ready = open_store(ws, tmp_path / "home-a")
    seen: list[tuple[int, int]] = []
    assert ready.prepare(lambda done, total: seen.append((done, total)))
    assert not ready.prepare()  # walked already in this process
    if bulk:
        assert seen and seen[-1][0] == seen[-1][1] == 5
    (ws / "src" / "main.py").write_text("print('after the walk')\n")  # an editor's save
    ready.note_paths(["src/main.py"])
    plain = open_store(ws, tmp_path / "home-b")
    a, b = ready.ensure_baseline("s"), plain.ensure_baseline("s")
    assert _files(a) == _files(b) == []  # a first checkpoint lists no files
    assert ready.tree_of(a.id) == plain.tree_of(b.id)  # type: ignore[union-attr]
    assert ready._modes_of(ready.repo.head()) == plain._modes_of(plain.repo.head())
    (ws / "docs" / "readme.md").write_text("# changed\n")
    for store in (ready, plain):
        store.note_paths(["docs/readme.md"])
    assert _files(ready.commit_turn("s", "t1", "t")) == [("modified", "docs/readme.md")]
    assert _files(plain.commit_turn("s", "t1", "t")) == [("modified", "docs/readme.md")]


def test_changes_found_after_a_restart_become_the_next_baseline(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    first = open_store(ws, tmp_path / "home")
    first.ensure_baseline("s")
    (ws / "src" / "util.py").write_text("changed while no server ran\n")
    (ws / "docs" / "readme.md").unlink()
    again = open_store(ws, tmp_path / "home")  # another process
    assert again.prepare()
    cp = again.ensure_baseline("s")
    assert cp is not None and cp.kind == "baseline"
    assert _files(cp) == [("deleted", "docs/readme.md"), ("modified", "src/util.py")]
    assert again.ensure_baseline("s") is None
    untouched = open_store(ws, tmp_path / "home")
    assert untouched.prepare() and untouched._prepared is None  # nothing to carry


def test_a_checkpoint_asked_for_during_the_walk_waits_and_keeps_every_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stage, "BULK_ADD", 1)
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    hashing, release = threading.Event(), threading.Event()

    def progress(done: int, total: int) -> None:
        hashing.set()
        assert release.wait(WAIT)

    walker = threading.Thread(target=store.prepare, args=(progress,))
    walker.start()
    assert hashing.wait(WAIT)
    # while files are hashed: an editor saves one file (the watcher notes it), a turn wants
    # its baseline before its first edit
    (ws / "src" / "util.py").write_text("saved during the walk\n")
    store.note_paths(["src/util.py"])
    got: list[Checkpoint | None] = []
    baseline = threading.Thread(target=lambda: got.append(store.ensure_baseline("s")))
    baseline.start()
    baseline.join(0.2)
    assert baseline.is_alive() and not got  # it waits for the walk
    release.set()
    walker.join(WAIT)
    baseline.join(WAIT)
    assert not walker.is_alive() and not baseline.is_alive()
    base = got[0]
    assert base is not None and base.kind == "baseline"
    before = tree_hash(ws)
    (ws / "src" / "main.py").write_text("print('the turn')\n")  # the turn's edit
    store.note_paths(["src/main.py"])
    turn = store.commit_turn("s", "t1", "edit")
    assert _files(turn) == [("modified", "src/main.py")]
    assert turn is not None
    diff = store.diff(turn.id)
    assert "-print('hello')" in diff.diff and "+print('the turn')" in diff.diff
    store.restore(base.id)
    assert tree_hash(ws) == before  # the baseline holds the save made during the walk
    assert (ws / "src" / "util.py").read_text() == "saved during the walk\n"


def test_a_failed_walk_leaves_the_next_checkpoint_to_walk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk trouble")

    monkeypatch.setattr(store.stager, "scan", broken)
    with pytest.raises(OSError):
        store.prepare()
    monkeypatch.undo()
    assert store.wait_prepared(0)  # not left waiting
    base = store.ensure_baseline("s")
    assert base is not None and store.tree_of(base.id) == open_store(
        ws, tmp_path / "other").tree_of(open_store(ws, tmp_path / "other").ensure_baseline(
            "s").id)  # type: ignore[union-attr]


def test_a_cancelled_walk_keeps_nothing_and_the_next_checkpoint_walks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stage, "BULK_ADD", 1)
    ws = make_workspace(tmp_path, git=False)
    for n in range(2500):
        (ws / "src" / f"f{n}.txt").write_text(f"{n}\n")
    store = open_store(ws, tmp_path / "home")
    cancel = threading.Event()
    seen: list[int] = []

    def stop_after_the_first_report(done: int, total: int) -> None:
        seen.append(done)
        cancel.set()  # the server is shutting down

    assert not store.prepare(stop_after_the_first_report, cancel)
    assert seen == [1000]  # stopped at its next report: the rest was never hashed
    assert store.repo.head() is None
    assert not store.prepare(cancel=cancel)  # told to stop before it starts: it does not
    plain = open_store(ws, tmp_path / "home-plain")
    a, b = store.ensure_baseline("s"), plain.ensure_baseline("s")
    assert a is not None and b is not None
    assert store.tree_of(a.id) == plain.tree_of(b.id)
