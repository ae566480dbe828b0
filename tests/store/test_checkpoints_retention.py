"""Checkpoint store: retention by count and age, keeping referenced checkpoints (real git)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.store._cp_helpers import make_workspace, open_store, tree_hash


def _turns(store, ws: Path, n: int) -> list[str]:  # type: ignore[no-untyped-def]
    ids = []
    for i in range(n):
        (ws / f"f{i}.txt").write_text(f"{i}\n")
        (ws / "counter.txt").write_text(f"{i}\n")
        store.note_paths([f"f{i}.txt", "counter.txt"])
        cp = store.commit_turn("s", f"t{i}", "m")
        assert cp is not None
        ids.append(cp.id)
    return ids


def _objects(store) -> int:  # type: ignore[no-untyped-def]
    out = subprocess.run(["git", "count-objects", "-v"], env={"GIT_DIR": str(store.repo.git_dir)},
                         capture_output=True, text=True, check=True).stdout
    return int(out.split("count: ")[1].split()[0])


def test_prune_by_count_keeps_referenced_and_exact_diffs(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=True)
    store = open_store(ws, tmp_path / "home")
    base = store.ensure_baseline("s")
    assert base is not None
    ids = _turns(store, ws, 10)
    diffs = {i: store.diff(i) for i in ids}
    before_objects = _objects(store)
    referenced = {ids[2], base.id}
    dropped = store.prune(max_count=3, max_age_days=None, keep_ids=referenced)
    assert set(dropped) == set(ids[:7]) - referenced
    kept = [c.id for c in store.list()]
    assert kept == [ids[9], ids[8], ids[7], ids[2], base.id]
    for cid in (ids[9], ids[8], ids[7], ids[2]):
        assert store.diff(cid) == diffs[cid]  # each kept checkpoint still diffs exactly
    assert store.get(ids[7]).parent_id is None  # its parent is gone
    assert store.get(ids[8]).parent_id == ids[7]
    assert _objects(store) < before_objects
    # the store keeps working: next turn, restore of a kept checkpoint, list from a fresh process
    nxt = _turns(store, ws, 1)
    assert store.get(nxt[0]).parent_id == ids[9]
    store.restore(ids[2])
    assert (ws / "counter.txt").read_text() == "2\n"
    assert [c.id for c in open_store(ws, tmp_path / "home").list()][-5:] == kept


def test_prune_by_age_and_force(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    ids = _turns(store, ws, 4)
    assert store.prune(max_count=None, max_age_days=1) == []
    state = tree_hash(ws)
    dropped = store.prune(max_count=None, max_age_days=0, keep_ids={ids[1]})
    assert ids[1] not in dropped and ids[3] not in dropped
    assert [c.id for c in store.list()] == [ids[3], ids[1]]
    dropped = store.prune(max_count=1, max_age_days=None, keep_ids={ids[1]}, force=True)
    assert dropped == [ids[1]]
    assert [c.id for c in store.list()] == [ids[3]]
    assert tree_hash(ws) == state  # pruning never touches the workspace


def test_packed_baseline_reads_restores_and_prunes(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp.store.checkpoints import stage

    monkeypatch.setattr(stage, "BULK_ADD", 2)  # take the bulk path even on a small tree
    ws = make_workspace(tmp_path, git=True)
    store = open_store(ws, tmp_path / "home")
    base = store.ensure_baseline("s")
    assert base is not None
    assert list((store.repo.git_dir / "objects" / "pack").glob("*.pack"))
    state = tree_hash(ws)
    ids = _turns(store, ws, 3)
    (ws / "src" / "main.py").write_text("edited\n")
    store.note_paths(["src/main.py"])
    edit = store.commit_turn("s", "edit", "m")
    assert edit is not None
    diff = store.diff(edit.id)
    assert diff.files[0].before == "print('hello')\n"
    store.prune(max_count=2, keep_ids={base.id})  # repacks: every object is packed afterwards
    assert [c.id for c in store.list()] == [edit.id, ids[2], base.id]
    fresh = open_store(ws, tmp_path / "home")
    fresh.restore(base.id)
    assert tree_hash(ws) == state
    assert fresh.diff(edit.id) == diff


def test_prune_if_due_uses_the_configured_limits(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home", max_count=4)
    base = store.ensure_baseline("s")
    assert base is not None
    ids = _turns(store, ws, 3)
    assert store.prune_if_due() == []  # four checkpoints: within the limit
    more = _turns(store, ws, 2)
    dropped = store.prune_if_due(keep_ids={base.id})
    assert dropped == [ids[0]]
    assert [c.id for c in store.list()] == [*reversed(more), ids[2], ids[1], base.id]


def test_checkpoints_made_during_a_background_prune_land_on_top(tmp_path: Path) -> None:
    """The prune holds the lock only to read the chain and to move the head: a turn that
    checkpoints meanwhile (here: while the referenced ids are collected) is re-committed on
    top of the rewritten chain, with its files and diff intact."""
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home", max_count=4)
    base = store.ensure_baseline("s")
    assert base is not None
    ids = _turns(store, ws, 5)
    during: list[str] = []

    def keep() -> set[str]:
        (ws / "during.txt").write_text("written while pruning\n")
        store.note_paths(["during.txt"])
        cp = store.commit_turn("s", "td", "during")
        assert cp is not None
        during.append(cp.id)
        return {base.id}

    loose = set(store.repo.odb.loose_ids())  # the walk of the baseline ran git
    dropped = store.prune_if_due(keep_ids=keep)
    assert dropped == [ids[0]]  # decided on the chain as it was when the prune began
    new = set(store.repo.odb.loose_ids()) - loose  # a walk's blobs (git), the replayed top
    assert sum(store.repo.odb.read(sha)[0] == "commit" for sha in new) <= len(during), \
        "the re-commits went into a pack, not one loose file each"
    listed = [c.id for c in store.list()]
    assert listed == [during[0], *reversed(ids[1:]), base.id]
    fresh = open_store(ws, tmp_path / "home", max_count=4)
    assert [c.id for c in fresh.list()] == listed
    top = fresh.get(during[0])
    assert [f.path for f in top.files] == ["during.txt"] and top.parent_id == ids[4]
    assert "+written while pruning" in fresh.diff(during[0]).diff
    (ws / "after.txt").write_text("after\n")
    store.note_paths(["after.txt"])
    after = store.commit_turn("s", "ta", "after")
    assert after is not None and after.parent_id == during[0]
    files = tree_hash(ws)
    restored = store.restore(ids[2])
    assert restored.restored and not (ws / "during.txt").exists()
    assert restored.safety_checkpoint_id is not None
    store.restore(restored.safety_checkpoint_id)
    assert tree_hash(ws) == files


def test_a_turn_asks_for_no_prune_while_no_limit_can_be_exceeded(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home", max_count=4)
    assert store.retention_may_be_due()  # nothing known yet: the background prune decides
    store.ensure_baseline("s")

    def turn(n: int) -> None:
        (ws / "f.txt").write_text(f"version {n}\n")
        store.note_paths(["f.txt"])
        assert store.commit_turn("s", f"t{n}", "m") is not None

    turn(1)
    turn(2)
    store.list()  # the chain as this process knows it
    assert not store.retention_may_be_due()  # three checkpoints, all new: nothing to drop
    turn(3)
    assert not store.retention_may_be_due()  # four: at the limit
    turn(4)
    assert store.retention_may_be_due()  # five: past it by the margin (a tenth, at least one)
    store.prune_if_due()
    assert not store.retention_may_be_due()
    aged = open_store(ws, tmp_path / "home", max_count=100, max_age_days=0.0)
    aged.list()
    assert aged.retention_may_be_due()  # every checkpoint is older than no days at all
