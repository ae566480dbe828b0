"""The first checkpoint of a tree hashed in process into one pack (``checkpoints.bulk``) is
exactly what git records: ``git add -A`` + ``git write-tree`` of the same files, with the same
ignore rules, symlinks, executable bits and odd bytes in names."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from openprogram_lsp.store.checkpoints import stage
from openprogram_lsp.store.checkpoints.store import CheckpointStore
from openprogram_lsp.store.git import git_env

from ._cp_helpers import open_store, sh

ODD = os.fsdecode(b"odd \xff\xfe name\n.txt")  # not UTF-8, a newline and spaces


def _tree(root: Path) -> Path:
    ws = root / "ws"
    (ws / "src" / "deep" / "er").mkdir(parents=True)
    (ws / "build").mkdir()
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print('hello')\n")
    (ws / "src" / "deep" / "er" / "x.txt").write_text("deep\n")
    (ws / "src" / "empty").write_bytes(b"")
    (ws / "build" / "out.o").write_bytes(b"\0obj")
    (ws / "node_modules" / "pkg" / "index.js").write_text("1\n")
    (ws / "keep.log").write_text("kept by a negation\n")
    (ws / "drop.log").write_text("ignored\n")
    (ws / ".gitignore").write_text("*.log\n!keep.log\nbuild/\n")
    (ws / "src" / ".gitignore").write_text("*.tmp\n")
    (ws / "src" / "scratch.tmp").write_text("ignored below src\n")
    run = ws / "run.sh"
    run.write_text("#!/bin/sh\necho hi\n")
    run.chmod(0o755)
    secret = ws / "secret.txt"
    secret.write_text("mode 0600\n")
    secret.chmod(0o600)
    os.symlink("src/main.py", ws / "link-to-file")
    os.symlink("src", ws / "link-to-dir")
    os.symlink("does/not/exist", ws / "dangling")
    (ws / os.fsencode(ODD).decode("utf-8", "surrogateescape")).write_bytes(b"odd bytes\n")
    (ws / "ünï cödé.md").write_text("unicode\n")
    (ws / "big.bin").write_bytes(b"b" * 3000)  # over the store's limit below
    os.mkfifo(ws / "a-fifo")
    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "code.c").write_text("int x;\n")
    sh("git init -q -b main && git add -A && git commit -qm nested", nested)
    return ws


def _reference_tree(ws: Path, store: CheckpointStore, tmp: Path) -> str:
    """``git add -A`` + ``git write-tree`` on a fresh index with the store's own excludes."""
    git_dir = tmp / "ref.git"
    env = git_env({"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(ws),
                   "GIT_INDEX_FILE": str(tmp / "ref.index")})
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True, env=git_env())
    (git_dir / "info").mkdir(exist_ok=True)
    shutil.copy(store.repo.git_dir / "info" / "exclude", git_dir / "info" / "exclude")
    subprocess.run(["git", "-c", "core.symlinks=true", "-c", "core.filemode=true", "add", "-A"],
                   check=True, env=env, capture_output=True)
    return subprocess.run(["git", "write-tree"], check=True, env=env,
                          capture_output=True).stdout.decode().strip()


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "general"])
def test_first_checkpoint_equals_git_write_tree(tmp_path: Path, bulk: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _tree(tmp_path)
    monkeypatch.setattr(stage, "BULK_ADD", 1 if bulk else 10**9)
    store = open_store(ws, tmp_path / "home", max_file_bytes=2000)
    base = store.ensure_baseline("s")
    assert base is not None and base.kind == "baseline"
    tree = store.tree_of(base.id)
    assert tree == _reference_tree(ws, store, tmp_path)
    listing = store.repo.git(["ls-tree", "-r", "-z", "--full-tree", tree])
    entries = {line.split(b"\t", 1)[1]: line.split()[0] for line in listing.split(b"\0") if line}
    assert entries[b"run.sh"] == b"100755" and entries[b"link-to-dir"] == b"120000"
    assert os.fsencode(ODD) in entries and b"keep.log" in entries
    assert not any(p.startswith((b"vendor", b"build", b"node_modules")) for p in entries)
    assert {b"drop.log", b"big.bin", b"a-fifo", b"src/scratch.tmp"}.isdisjoint(entries)
    assert base.skipped == ["a-fifo", "big.bin"]  # (a FIFO: never recordable)
    assert store._modes_of(store.repo.head()) == {"secret.txt": 0o600}
    assert "vendor/lib" in store.repo.nested
    # the private index equals the tree, with stat data: git sees nothing to do
    assert store.repo.git(["write-tree"]).decode().strip() == tree
    assert store.repo.git(["status", "--porcelain", "-z", "-uall"]) == b""
    store.repo.git(["fsck", "--no-dangling"])
    if bulk:
        packs = list((store.repo.git_dir / "objects" / "pack").glob("*.pack"))
        assert len(packs) == 2, "blobs and trees in the walk's pack, the commit in a small one"
        assert list(store.repo.odb.loose_ids()) == []


def test_bulk_walk_on_top_of_a_checkpoint_and_its_fallbacks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _tree(tmp_path)
    monkeypatch.setattr(stage, "BULK_ADD", 1)
    store = open_store(ws, tmp_path / "home", max_file_bytes=2000)
    store.ensure_baseline("s")
    (ws / "src" / "main.py").write_text("print('changed')\n")
    (ws / "src" / "empty").unlink()
    (ws / "new.txt").write_text("new\n")
    (ws / "run.sh").chmod(0o644)
    store.note_all()
    cp = store.commit_turn("s", "t1", "edits")
    assert cp is not None
    assert sorted((f.status, f.path) for f in cp.files) == [
        ("added", "new.txt"), ("deleted", "src/empty"), ("modified", "run.sh"),
        ("modified", "src/main.py")]
    # a tracked file that became a directory: the general path takes it
    (ws / "new.txt").unlink()
    (ws / "new.txt").mkdir()
    (ws / "new.txt" / "inner").write_text("inside\n")
    store.note_all()
    cp2 = store.commit_turn("s", "t2", "swap")
    assert cp2 is not None
    assert sorted((f.status, f.path) for f in cp2.files) == [
        ("added", "new.txt/inner"), ("deleted", "new.txt")]
    assert store.tree_of(cp2.id) == _reference_tree(ws, store, tmp_path)
    store.note_all()
    assert store.commit_turn("s", "t3", "nothing") is None
