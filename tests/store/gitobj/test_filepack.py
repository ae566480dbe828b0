"""Files hashed into one pack by a child process: the same answer as in process, a pack git
verifies, a cancel that leaves nothing, and the in-process path when no child can start."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.store.gitobj._git import git

from openprogram_lsp.store.git import git_env
from openprogram_lsp.store.gitobj import ObjectDB, filepack

ODD = os.fsdecode(b"odd \xff name.txt")  # not UTF-8
DEFAULTS = {filepack.EXEC: 0o755, filepack.PLAIN: 0o644}
LIMIT = filepack.KEEP_BYTES + 1000  # mid.bin is within it, big.bin is not


def _workspace(root: Path) -> tuple[Path, list[str]]:
    ws = root / "ws"
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print('hi')\n")
    (ws / "src" / "deep" / "x.txt").write_text("deep\n")
    (ws / "empty").write_bytes(b"")
    run = ws / "run.sh"
    run.write_text("#!/bin/sh\n")
    run.chmod(0o755)
    secret = ws / "secret.txt"
    secret.write_text("0600\n")
    secret.chmod(0o600)
    os.symlink("src/main.py", ws / "link")
    os.mkfifo(ws / "fifo")
    (ws / "big.bin").write_bytes(b"b" * (LIMIT + 1))
    (ws / "mid.bin").write_bytes(os.urandom(filepack.KEEP_BYTES + 10))  # read by the packer
    (ws / ODD).write_bytes(b"odd\n")
    (ws / "vendor" / ".git").mkdir(parents=True)
    paths = ["src/main.py", "src/deep/x.txt", "empty", "run.sh", "secret.txt", "link", "fifo",
             "big.bin", "mid.bin", ODD, "vendor", "gone.txt"]
    return ws, sorted(paths)


def _bare(path: Path) -> ObjectDB:
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True, env=git_env())
    return ObjectDB(path)


def test_the_child_answers_as_the_process_would_and_git_reads_its_pack(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, paths = _workspace(tmp_path)
    here = filepack.pack_here(_bare(tmp_path / "a.git"), str(ws), None, paths, 2 * LIMIT,
                                DEFAULTS)
    seen: list[tuple[int, int]] = []

    def nowhere(*args: object) -> filepack.Packed:
        raise AssertionError("hashed in this process")

    monkeypatch.setattr(filepack, "pack_here", nowhere)  # only the child's own copy may run
    odb = _bare(tmp_path / "b.git")
    child = filepack.pack_files(odb, str(ws), None, paths, LIMIT, DEFAULTS,
                                lambda done, total: seen.append((done, total)))
    assert seen == [(len(paths), len(paths))]
    assert child.odd == {"fifo": "other", "big.bin": "large", "vendor": "nested",
                         "gone.txt": "gone"}
    assert child.perms == {"secret.txt": 0o600}
    # the same tree and index entries (the in-process run took big.bin: a higher limit)
    assert here.odd == {k: v for k, v in child.odd.items() if k != "big.bin"}
    listed = git(odb.git_dir, "ls-tree", "-r", "-z", child.tree or "").split(b"\0")
    assert sorted(e.split(b"\t")[1] for e in listed if e) == sorted(
        os.fsencode(p) for p in paths if p not in child.odd)
    assert odb.read(child.tree or "")[0] == "tree"  # (the parent's database sees the pack)
    entries = sorted(e for e in child.index_info.split(b"\0") if e)
    assert entries == sorted(e for e in here.index_info.split(b"\0")
                             if e and not e.endswith(b"\tbig.bin"))
    assert b"0 " + b"0" * 40 + b"\tfifo" in entries  # not recorded: dropped from the index
    for pack in (odb.git_dir / "objects" / "pack").glob("*.idx"):
        git(odb.git_dir, "verify-pack", str(pack))
    assert git(odb.git_dir, "cat-file", "blob", f"{child.tree}:{ODD}") == b"odd\n"
    assert git(odb.git_dir, "cat-file", "-p", f"{child.tree}:mid.bin") == \
        (ws / "mid.bin").read_bytes()


def test_with_a_base_tree_anything_but_files_sends_the_caller_to_its_general_path(
        tmp_path: Path) -> None:
    ws, _paths = _workspace(tmp_path)
    odb = _bare(tmp_path / "r.git")
    first = filepack.pack_files(odb, str(ws), None, ["src/main.py"], LIMIT, DEFAULTS)
    assert first.tree is not None
    (ws / "src" / "main.py").write_text("changed\n")
    again = filepack.pack_files(odb, str(ws), first.tree, ["empty", "src/main.py"], LIMIT,
                                DEFAULTS)
    assert again.tree is not None and again.tree != first.tree
    assert filepack.pack_files(odb, str(ws), first.tree, ["big.bin", "empty"], LIMIT,
                               DEFAULTS).tree is None
    assert filepack.pack_files(odb, str(ws), None, ["src"], LIMIT, DEFAULTS).tree is None


def test_a_cancel_stops_the_child_and_leaves_no_pack(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    paths = [f"f{i}" for i in range(8 * filepack.PROGRESS_EVERY)]
    for p in paths:
        (ws / p).write_text(p)

    class Stop(Exception):
        pass

    def stop(done: int, total: int) -> None:
        raise Stop

    odb = _bare(tmp_path / "r.git")
    with pytest.raises(Stop):
        filepack.pack_files(odb, str(ws), None, sorted(paths), LIMIT, DEFAULTS, stop)
    assert list((odb.git_dir / "objects" / "pack").iterdir()) == []


@pytest.mark.parametrize("how", ["no interpreter", "cannot start", "dies"])
def test_without_a_child_the_files_are_hashed_in_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    ws, paths = _workspace(tmp_path)
    if how == "no interpreter":
        monkeypatch.setattr(filepack.sys, "executable", "")
    elif how == "cannot start":
        monkeypatch.setattr(filepack.sys, "executable", str(tmp_path / "missing-python"))
    else:  # an interpreter that exits at once, saying why
        fake = tmp_path / "python"
        fake.write_text("#!/bin/sh\necho 'no such module' >&2\nexit 3\n")
        fake.chmod(0o755)
        monkeypatch.setattr(filepack.sys, "executable", str(fake))
    packed = filepack.pack_files(_bare(tmp_path / "r.git"), str(ws), None, paths, LIMIT, DEFAULTS)
    reference = filepack.pack_here(_bare(tmp_path / "ref.git"), str(ws), None, paths, LIMIT,
                                   DEFAULTS)
    assert (packed.tree, packed.odd, packed.perms, packed.index_info) == (
        reference.tree, reference.odd, reference.perms, reference.index_info)


def test_modules_in_the_current_directory_never_run_in_the_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server started in a hostile workspace: ``python -m`` would import the workspace's
    ``json.py`` (or its own package's name) before the real ones."""
    ws, paths = _workspace(tmp_path)
    marker = tmp_path / "ran"
    plant = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('planted')\n"
    (ws / "json.py").write_text(plant)
    (ws / "openprogram_lsp").mkdir()
    (ws / "openprogram_lsp" / "__init__.py").write_text(plant)
    monkeypatch.chdir(ws)

    def nowhere(*args: object) -> filepack.Packed:
        raise AssertionError("hashed in this process")

    monkeypatch.setattr(filepack, "pack_here", nowhere)
    packed = filepack.pack_files(_bare(tmp_path / "c.git"), str(ws), None, paths, 2 * LIMIT,
                                 DEFAULTS)
    assert packed.tree is not None
    assert not marker.exists()


def test_a_file_swapped_after_its_stat_is_not_read_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A racing process puts a fifo (an open would wait forever), a symlink or a bigger file
    where the walk saw a small regular file: none is read as that file."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "small").write_text("small\n")
    os.mkfifo(ws / "fifo")
    os.symlink("small", ws / "link")
    (ws / "grown").write_bytes(b"g" * 100)
    seen_as = os.lstat(ws / "small")
    real_lstat = os.lstat
    monkeypatch.setattr(filepack.os, "lstat",
                        lambda p: seen_as if os.path.basename(p) != "small" else real_lstat(p))
    assert filepack._hash_one(str(ws), "fifo", 50, 50).kind == "other"
    assert filepack._hash_one(str(ws), "link", 50, 50).kind == "other"
    assert filepack._hash_one(str(ws), "grown", 50, 50).kind == "large"
    assert filepack._hash_one(str(ws), "small", 50, 50).leaf is not None
