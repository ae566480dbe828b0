"""The in-process object layer against real git: what one writes, the other reads."""

from __future__ import annotations

import os
import random
import re
import subprocess
from pathlib import Path

import pytest
from tests.store.gitobj._git import git

from openprogram_lsp.store.git import git_env
from openprogram_lsp.store.gitobj import MissingObject, ObjectDB, trees
from openprogram_lsp.store.gitobj.trees import (
    TreeConflict,
    diff_trees,
    read_commit,
    update_tree,
    write_commit,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=git_env())
    return path


def test_objects_written_here_are_read_by_git(repo: Path) -> None:
    odb = ObjectDB(repo / ".git")
    blob = odb.write("blob", b"hello\n")
    assert blob == git(repo, "hash-object", "--stdin", input=b"hello\n").decode().strip()
    tree = update_tree(odb, None, {"a/b.txt": ("100644", blob), "x": ("100755", blob)})
    commit = write_commit(odb, tree, [], "first\n\nbody", 1_700_000_000)
    git(repo, "update-ref", "refs/heads/main", commit)
    assert git(repo, "cat-file", "blob", "main:a/b.txt") == b"hello\n"
    assert git(repo, "ls-tree", "-r", "--name-only", "main").split() == [b"a/b.txt", b"x"]
    git(repo, "fsck", "--strict", "--no-dangling")
    info = read_commit(odb, commit)
    assert (info.tree, info.parents, info.message) == (tree, (), "first\n\nbody")


def test_deltas_in_git_packs_are_read_in_process(repo: Path) -> None:
    text = "".join(f"line {n}\n" for n in range(400))
    for n in range(4):  # near-identical versions: git stores them as deltas
        (repo / "f.txt").write_text(text + f"change {n}\n")
        git(repo, "add", "f.txt")
        git(repo, "commit", "-qm", f"v{n}")
    git(repo, "gc", "-q", "--aggressive")
    verify = git(repo, "verify-pack", "-v", *map(str, (repo / ".git/objects/pack").glob("*.idx")))
    assert any(len(line.split()) >= 7 for line in verify.splitlines())  # some entry is a delta
    odb = ObjectDB(repo / ".git")
    for n, rev in enumerate(["main~3", "main~2", "main~1", "main"]):
        sha = git(repo, "rev-parse", f"{rev}:f.txt").decode().strip()
        assert odb.read(sha) == ("blob", (text + f"change {n}\n").encode())
    with pytest.raises(MissingObject):
        odb.read("1" * 40)
    assert not odb.has("1" * 40)


def test_loose_objects_move_into_a_pack_git_accepts(repo: Path) -> None:
    odb = ObjectDB(repo / ".git")
    blobs = [odb.write("blob", os.urandom(64) + bytes([n])) for n in range(30)]
    tree = update_tree(odb, None, {f"d/{n}": ("100644", b) for n, b in enumerate(blobs)})
    git(repo, "update-ref", "refs/heads/main", write_commit(odb, tree, [], "m", 1))
    reader = ObjectDB(repo / ".git")
    assert reader.read(blobs[0])[0] == "blob"  # a reader that saw the loose objects first
    fds = len(os.listdir("/proc/self/fd"))
    moved = odb.pack_loose(batch=10)
    assert moved >= 32
    assert len(os.listdir("/proc/self/fd")) < fds + 12  # the packs maps, not one per object
    names = sorted(p.name for p in (repo / ".git/objects/pack").iterdir())
    assert len(names) == 2 * -(-moved // 10)
    assert all(re.fullmatch(r"pack-[0-9a-f]{40}\.(idx|pack)", n) for n in names), names
    assert list(odb.loose_ids()) == []
    git(repo, "fsck", "--strict", "--no-dangling")
    assert reader.read(blobs[29]) == odb.read(blobs[29])
    assert git(repo, "cat-file", "-t", blobs[5]) == b"blob\n"


def test_update_tree_touches_only_the_changed_paths(repo: Path) -> None:
    odb = ObjectDB(repo / ".git")
    one, two = odb.write("blob", b"1"), odb.write("blob", b"2")
    base = update_tree(odb, None, {"k/a": ("100644", one), "k/b": ("100644", one),
                                   "m/c": ("100644", one)})
    new = update_tree(odb, base, {"k/a": ("100644", two), "m/c": None, "n": ("120000", two)})
    assert [(c.status, c.path) for c in diff_trees(odb, base, new)] == [
        ("M", "k/a"), ("D", "m/c"), ("A", "n")]
    with pytest.raises(TreeConflict):
        update_tree(odb, base, {"k": ("100644", one)})
    with pytest.raises(TreeConflict):
        update_tree(odb, base, {"k/a/deeper": ("100644", one)})


def test_an_update_that_changes_nothing_writes_no_tree(repo: Path) -> None:
    odb = ObjectDB(repo / ".git")
    one, two = odb.write("blob", b"1"), odb.write("blob", b"2")
    base = update_tree(odb, None, {f"d{n}/f": ("100644", one) for n in range(50)})
    writes: list[str] = []
    real = odb.write

    def counted(kind: str, body: bytes) -> str:
        writes.append(kind)
        return real(kind, body)

    odb.write = counted  # type: ignore[method-assign]
    # a path set to what it holds, a missing one removed (a turn's new file's before-state)
    assert update_tree(odb, base, {"d3/f": ("100644", one), "d4/gone": None, "new": None}) == base
    assert writes == []
    changed = update_tree(odb, base, {"d3/f": ("100644", two), "d4/gone": None})
    assert writes == ["tree", "tree"]  # d3 and the root; d4 is not written again
    assert [(c.status, c.path) for c in diff_trees(odb, base, changed)] == [("M", "d3/f")]


def test_a_tree_patched_from_its_cached_rows_is_the_tree_built_whole(repo: Path) -> None:
    odb = ObjectDB(repo / ".git")
    rng = random.Random(7)
    blobs = [odb.write("blob", f"v{n}".encode()) for n in range(5)]
    names = [f"{n:03d}.json" for n in range(40)] + ["a", "a.b", "a-c", "z/1", "z/2", "zz"]
    paths = {p: ("100644", rng.choice(blobs)) for p in names}
    tree = update_tree(odb, None, paths)  # type: ignore[arg-type]
    for _ in range(30):  # changes, additions, removals, files where directories sort
        changes: dict[str, tuple[str, str] | None] = {}
        for p in rng.sample(names, 4):
            changes[p] = None if rng.random() < 0.3 else (rng.choice(["100644", "100755"]),
                                                         rng.choice(blobs))
        changes[f"{rng.randrange(100):03d}.json"] = ("100644", rng.choice(blobs))
        tree = update_tree(odb, tree, changes)
        for p, leaf in changes.items():
            if leaf is None:
                paths.pop(p, None)
            else:
                paths[p] = leaf
        trees._rows.clear()  # the same content built from every entry
        assert update_tree(odb, None, paths) == tree  # type: ignore[arg-type]
    assert git(repo, "ls-tree", "-r", "--name-only", tree).split() == sorted(
        p.encode() for p in paths)


def test_a_pack_removed_while_the_packs_are_listed_is_looked_for_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a repack in another thread or process removes a pack between gitdb's listing of the pack
    # directory and its open of that pack (a full run's session-migration test failed so)
    from gitdb.db.pack import PackedDB

    (repo / "f.txt").write_text("packed\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-qm", "one")
    git(repo, "gc", "-q")
    sha = git(repo, "rev-parse", "main:f.txt").decode().strip()
    real = PackedDB.update_cache
    calls: list[bool] = []

    def racing(self: PackedDB, force: bool = False) -> bool:
        calls.append(force)
        if len(calls) == 1:
            raise FileNotFoundError(2, "No such file or directory", "pack-gone.pack")
        return bool(real(self, force))

    monkeypatch.setattr(PackedDB, "update_cache", racing)
    assert ObjectDB(repo / ".git").read(sha) == ("blob", b"packed\n")
    assert len(calls) >= 2  # the failed look, then a fresh one
