"""One pack written in process: git verifies it and reads every object back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.store.gitobj._git import git

from openprogram_lsp.store.gitobj import ObjectDB
from openprogram_lsp.store.gitobj.odb import object_id
from openprogram_lsp.store.gitobj.packwrite import PackWriter, index_v2, pack_record
from openprogram_lsp.store.gitobj.trees import read_tree, update_tree


def test_git_verifies_the_pack_and_reads_every_object(repo: Path) -> None:
    bodies = [b"", b"x", b"hello\n" * 3, os.urandom(300_000), b"line\n" * 100_000]
    odb = ObjectDB(repo)
    pack = PackWriter(odb)
    shas = [pack.write("blob", body) for body in bodies]
    pack.write("blob", b"x")  # a duplicate is stored once
    tree = update_tree(pack, None, {f"d/{n}": ("100644", sha) for n, sha in enumerate(shas)})
    path = pack.finish()
    assert path is not None and path.suffix == ".pack" and path.with_suffix(".idx").exists()
    assert [p.name for p in (repo / "objects" / "pack").iterdir() if "tmp" in p.name] == []
    verify = git(repo, "verify-pack", "-v", str(path.with_suffix(".idx"))).decode()
    assert f"non delta: {len(bodies) + 2} objects" in verify  # 5 blobs, 2 trees
    git(repo, "fsck", "--strict", "--no-dangling")
    for sha, body in zip(shas, bodies, strict=True):
        assert sha == object_id("blob", body)
        assert git(repo, "cat-file", "blob", sha) == body
        assert ObjectDB(repo).read(sha) == ("blob", body)
    assert git(repo, "ls-tree", "-r", "--name-only", tree).decode().split() == [
        f"d/{n}" for n in range(len(bodies))]
    assert set(read_tree(ObjectDB(repo), tree)) == {"d"}


def test_an_empty_or_aborted_pack_leaves_nothing(repo: Path) -> None:
    odb = ObjectDB(repo)
    assert PackWriter(odb).finish() is None
    pack = PackWriter(odb)
    pack.write("blob", b"never")
    pack.abort()
    assert list((repo / "objects" / "pack").iterdir()) == []
    with pytest.raises(ValueError):
        PackWriter(odb).write("note", b"x")


def test_large_offsets_use_the_64_bit_table() -> None:
    entries = [(bytes([n]) * 20, n, ofs) for n, ofs in enumerate((12, 0x7FFFFFFF, 0x80000000,
                                                                  5 << 32))]
    idx = index_v2(entries, b"\1" * 20)
    count = len(entries)
    small = idx[8 + 1024 + 24 * count:8 + 1024 + 28 * count]
    large = idx[8 + 1024 + 28 * count:-40]
    assert small == b"".join(v.to_bytes(4, "big") for v in (12, 0x7FFFFFFF, 0x80000000,
                                                              0x80000001))
    assert large == (0x80000000).to_bytes(8, "big") + (5 << 32).to_bytes(8, "big")


def test_records_are_zlib_streams_git_accepts_for_any_size() -> None:
    import zlib

    for size in (0, 1, 200, 5000, 70_000):
        body = os.urandom(size)
        binsha, record = pack_record("blob", body)
        assert binsha.hex() == object_id("blob", body)
        header = 1
        while record[header - 1] & 0x80:
            header += 1
        assert zlib.decompress(record[header:]) == body
