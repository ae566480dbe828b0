"""A commit's objects as one small pack: git reads it, a crash between its files leaves a
readable store, another process sees every object or none."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.store.gitobj._git import git

from openprogram_lsp.store.gitobj import MissingObject, ObjectDB
from openprogram_lsp.store.gitobj.batch import ObjectBatch, remove_orphans
from openprogram_lsp.store.gitobj.trees import read_commit, update_tree, write_commit


def _commit(batch: ObjectBatch, base: str | None, files: dict[str, bytes],
            parents: list[str]) -> tuple[str, str]:
    leaves = {p: ("100644", batch.write("blob", b)) for p, b in files.items()}
    tree = update_tree(batch, base, leaves)  # type: ignore[arg-type]
    return tree, write_commit(batch, tree, parents, "m\n", 1_700_000_000)


def test_objects_are_read_from_the_batch_then_from_one_pack_git_verifies(repo: Path) -> None:
    odb = ObjectDB(repo)
    batch = ObjectBatch(odb)
    files = {"a": b"one", "d/b": b"two", "d/e/c": os.urandom(5000), "dup": b"one"}
    tree, commit = _commit(batch, None, files, [])
    assert len(batch) == 7  # 3 blobs (one shared), 3 trees, 1 commit
    assert batch.read(commit)[0] == "commit"
    with pytest.raises(MissingObject):
        odb.read(commit)  # nothing is visible before the flush
    pack = batch.flush()
    assert pack is not None and pack.with_suffix(".idx").exists()
    assert {p.name for p in pack.parent.iterdir()} == {pack.name, pack.with_suffix(
        ".idx").name}  # no temporary file left, no loose object
    assert list(odb.loose_ids()) == []
    verify = git(repo, "verify-pack", "-v", str(pack.with_suffix(".idx"))).decode()
    assert "non delta: 7 objects" in verify
    (repo / "refs" / "heads" / "main").write_text(commit + "\n")
    git(repo, "fsck", "--strict", "--no-dangling")
    assert git(repo, "cat-file", "blob", f"{commit}:d/e/c") == files["d/e/c"]
    assert read_commit(odb, commit).tree == tree  # the writer's own database sees the pack
    assert ObjectDB(repo).read(tree)[0] == "tree"
    assert batch.flush() is None  # flushed: empty again


def test_many_small_packs_are_all_read_and_git_merges_them(repo: Path) -> None:
    odb, reader = ObjectDB(repo), ObjectDB(repo)
    base, parents, commits = None, [], []
    for n in range(5):
        batch = ObjectBatch(odb)
        base, sha = _commit(batch, base, {f"n/{n}": f"node {n}".encode()}, parents)
        batch.flush()
        parents = [sha]
        commits.append(sha)
        assert reader.read(sha)[0] == "commit"  # another reader finds each new pack
    assert odb.take_new_packs() == 5
    (repo / "refs" / "heads" / "main").write_text(commits[-1] + "\n")
    git(repo, "repack", "-d", "-q", "--geometric=2")
    assert len(list((repo / "objects" / "pack").glob("*.idx"))) == 1
    for n in range(5):  # read after the packs it knew were removed
        assert reader.read(git(repo, "rev-parse", f"{commits[-1]}:n/{n}").decode().strip()) \
            == ("blob", f"node {n}".encode())


def test_a_crash_between_the_pack_and_its_index_leaves_a_readable_store(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    odb = ObjectDB(repo)
    first = ObjectBatch(odb)
    _tree, kept = _commit(first, None, {"a": b"kept"}, [])
    first.flush()
    batch = ObjectBatch(odb)
    _tree, lost = _commit(batch, None, {"a": b"lost"}, [kept])

    def killed(src: object, dst: object) -> None:
        raise KeyboardInterrupt  # as if the process died before the index was renamed in

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        batch.flush()
    monkeypatch.undo()
    names = sorted(p.name for p in (repo / "objects" / "pack").iterdir())
    assert len(names) == 3 and not any(n.startswith("tmp_") for n in names)  # one orphan pack
    fresh = ObjectDB(repo)
    assert fresh.read(kept)[0] == "commit"
    with pytest.raises(MissingObject):
        fresh.read(lost)  # none of the dead writer's objects exist
    (repo / "refs" / "heads" / "main").write_text(kept + "\n")
    git(repo, "fsck", "--strict", "--no-dangling")
    assert remove_orphans(fresh) == 0  # young: a writer may be between its two files
    assert remove_orphans(fresh, age=-1) == 1
    assert len(list((repo / "objects" / "pack").iterdir())) == 2
    again = ObjectBatch(fresh)  # the same objects written again make the same pack
    _commit(again, None, {"a": b"lost"}, [kept])
    again.flush()
    assert ObjectDB(repo).read(lost)[0] == "commit"


def test_a_second_process_reads_the_objects_of_a_flushed_batch(repo: Path) -> None:
    batch = ObjectBatch(ObjectDB(repo))
    _tree, commit = _commit(batch, None, {"x/y": b"from another process"}, [])
    batch.flush()
    code = ("import sys; from pathlib import Path; from openprogram_lsp.store.gitobj import "
            "ObjectDB; from openprogram_lsp.store.gitobj.trees import read_commit, lookup; "
            "db = ObjectDB(Path(sys.argv[1])); t = read_commit(db, sys.argv[2]).tree; "
            "sys.stdout.buffer.write(db.read(lookup(db, t, 'x/y')[1])[1])")
    out = subprocess.run([sys.executable, "-c", code, str(repo), commit], capture_output=True,
                         check=True, timeout=60).stdout
    assert out == b"from another process"


def test_unknown_kinds_are_refused(repo: Path) -> None:
    with pytest.raises(ValueError):
        ObjectBatch(ObjectDB(repo)).write("note", b"x")
