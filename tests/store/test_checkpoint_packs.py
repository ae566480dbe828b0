"""A checkpoint's new objects are one small pack; the small packs are merged in the background;
a commit that fails before its pack is written leaves the store as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store._cp_helpers import make_workspace, open_store

from openprogram_lsp.core.errors import CheckpointError
from openprogram_lsp.store.checkpoints import store as store_mod
from openprogram_lsp.store.pack_maintenance import pack_count, wait_for_maintenance


def _edit(store, ws: Path, i: int) -> str:  # type: ignore[no-untyped-def]
    (ws / "src" / f"f{i % 3}.py").write_text(f"x = {i}\n")
    store.note_paths([f"src/f{i % 3}.py"])
    cp = store.commit_turn("s", f"t{i}", f"turn {i}")
    assert cp is not None
    return str(cp.id)


def test_each_checkpoint_is_one_pack_and_the_merge_keeps_every_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_mod, "SMALL_PACKS", 6)
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    loose = set(store.repo.odb.loose_ids())  # the first walk ran git, which writes loose
    packs = pack_count(store.repo.odb)
    first = _edit(store, ws, 0)
    assert pack_count(store.repo.odb) == packs + 1  # blob, trees and commit: one pack
    assert set(store.repo.odb.loose_ids()) == loose
    ids = [first] + [_edit(store, ws, i) for i in range(1, store_mod.SMALL_PACKS + 2)]
    wait_for_maintenance()
    assert pack_count(store.repo.odb) < store_mod.SMALL_PACKS  # merged off the turn's path
    store.repo.git(["fsck", "--no-dangling"])
    fresh = open_store(ws, tmp_path / "home")  # another process reads the merged packs
    listed = [c.id for c in fresh.list()]
    assert listed[:len(ids)] == list(reversed(ids))
    assert "+x = 0" in fresh.diff(first).diff


def test_a_commit_failing_before_its_pack_is_written_leaves_no_trace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    ok = _edit(store, ws, 0)
    packs, head = pack_count(store.repo.odb), store.repo.head()

    def broken(*_a: object, **_k: object) -> str:
        raise CheckpointError("disk full")

    monkeypatch.setattr(store_mod, "write_commit", broken)
    (ws / "src" / "f1.py").write_text("lost = 1\n")
    store.note_paths(["src/f1.py"])
    with pytest.raises(CheckpointError):
        store.commit_turn("s", "t1", "fails")
    monkeypatch.undo()
    assert (pack_count(store.repo.odb), store.repo.head()) == (packs, head)
    again = store.commit_turn("s", "t2", "retried")  # the index never named the lost blobs
    assert again is not None and [f.path for f in again.files] == ["src/f1.py"]
    store.repo.git(["fsck", "--no-dangling"])
    assert [c.id for c in open_store(ws, tmp_path / "home").list()][:2] == [again.id, ok]
