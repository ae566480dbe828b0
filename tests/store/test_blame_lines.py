"""Line blame over the checkpoint store: lines a restore brought back keep the turn that
wrote them (real git)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store._cp_helpers import make_workspace, open_store

from openprogram_lsp.store.blame.lines import LineBlame
from openprogram_lsp.store.checkpoints import CheckpointStore


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    store = open_store(make_workspace(tmp_path, git=False), tmp_path / "home")
    store.ensure_baseline("s")
    return store


def _turn(store: CheckpointStore, turn: str, text: str) -> str:
    (store.workspace / "f.txt").write_text(text)
    store.note_paths(["f.txt"])
    cp = store.commit_turn("s", turn, turn)
    assert cp is not None
    return str(cp.id)


def _commits(blame: LineBlame) -> dict[str, str]:
    """checkpoint id -> its commit."""
    return {meta.id: commit for commit, (meta, _) in blame.metas().items() if meta is not None}


@pytest.mark.timeout(120)  # a hang guard: difflib (autojunk off) never finished on this file
def test_a_restore_of_many_repeated_lines_keeps_their_turn(store: CheckpointStore) -> None:
    first = "".join("x\n" if i % 2 else "\n" for i in range(20_000))
    t1 = _turn(store, "t1", first)
    _turn(store, "t2", "".join("y\n" if i % 3 else " \n" for i in range(20_000)))
    store.restore(t1)
    blame = LineBlame(store)
    owners = blame.current("f.txt", first.encode())
    assert owners is not None and len(owners) == 20_000
    assert {(o.kind, o.commit) for o in owners} == {("agent", _commits(blame)[t1])}


def test_a_hunk_restore_gives_each_line_back_to_its_turn(store: CheckpointStore) -> None:
    t1 = _turn(store, "t1", "a\nb\nc\n")
    t2 = _turn(store, "t2", "a\nB\nc\nD\n")
    store.restore_hunk(t2, "f.txt", 0)  # b comes back; D stays
    text = (store.workspace / "f.txt").read_text()
    assert text == "a\nb\nc\nD\n"
    blame = LineBlame(store)
    commits = _commits(blame)
    owners = blame.current("f.txt", text.encode())
    assert owners is not None
    assert [(o.kind, o.commit) for o in owners] == [("agent", commits[t1])] * 3 + \
        [("agent", commits[t2])]
