"""The git index reader behind the environment note: real indexes written by git (versions 2,
3 and 4, long and odd paths, symlinks, executables, intent-to-add) read as GitPython reads
them; a split index, a damaged file and too many entries refused."""

from __future__ import annotations

import contextlib
import random
import subprocess
from pathlib import Path

import pytest
from git.index.fun import read_cache  # the reference reader (a test dependency only)

from openprogram_lsp.context.git_index import Unreadable, read_index


def git(ws: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=ws,
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("hi\n")
    deep = ws / "src" / ("a-rather-long-directory-name-" * 6) / "pkg"
    deep.mkdir(parents=True)
    for i in range(30):
        (deep / f"module_{i:03d}.py").write_text(f"x = {i}\n" * i)
    (ws / "src" / "tool.sh").write_text("#!/bin/sh\n")
    (ws / "src" / "tool.sh").chmod(0o755)
    (ws / "link").symlink_to("README.md")
    (ws / "ünïcode name.txt").write_bytes(b"u\n")
    (ws / ("x" * 250)).write_text("long name\n")
    git(ws, "init", "-q")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "first")
    return ws


def _reference(ws: Path) -> list[tuple[str, int, int, int, int]]:
    with open(ws / ".git" / "index", "rb") as fh:
        _version, entries, _ext, _sha = read_cache(fh)
    return sorted((str(e.path), int(e.mode), int(e.size), int(e.mtime[0]), int(e.mtime[1]))
                  for e in entries.values())


def _ours(ws: Path, max_entries: int = 1000) -> list[tuple[str, int, int, int, int]] | None:
    got = read_index((ws / ".git" / "index").read_bytes(), max_entries)
    return None if got is None else sorted(got)


def _version(ws: Path) -> int:
    return int.from_bytes((ws / ".git" / "index").read_bytes()[4:8], "big")


def test_a_version_2_index_reads_as_gitpython_reads_it(repo: Path) -> None:
    git(repo, "update-index", "--index-version", "2")
    assert _version(repo) == 2
    ours = _ours(repo)
    assert ours == _reference(repo)
    assert ours is not None and len(ours) == 35
    modes = {path: mode for path, mode, *_ in ours}
    assert modes["link"] == 0o120000 and modes["src/tool.sh"] == 0o100755
    assert modes["ünïcode name.txt"] == 0o100644


def test_a_version_3_index_with_extended_flags(repo: Path) -> None:
    (repo / "new.txt").write_text("intended\n")
    git(repo, "add", "--intent-to-add", "new.txt")  # an extended flag: version 3
    assert _version(repo) == 3
    ours = _ours(repo)
    assert ours == _reference(repo)
    assert ours is not None and "new.txt" in {path for path, *_ in ours}


def test_a_version_4_index_reads_as_its_version_2_form(repo: Path) -> None:
    git(repo, "update-index", "--index-version", "2")
    expected = _ours(repo)
    git(repo, "update-index", "--index-version", "4")  # paths prefix-compressed
    assert _version(repo) == 4
    assert _ours(repo) == expected


def test_too_many_entries_is_none_and_refused_formats_raise(repo: Path) -> None:
    assert _ours(repo, max_entries=10) is None
    data = (repo / ".git" / "index").read_bytes()
    for bad in (b"", data[:40], data[:200], b"DIRC" + (9).to_bytes(4, "big") + data[8:]):
        with pytest.raises(Unreadable):
            read_index(bad, 1000)
    git(repo, "update-index", "--split-index")  # the entries live in a shared file
    with pytest.raises(Unreadable):
        read_index((repo / ".git" / "index").read_bytes(), 1000)


def test_random_damage_never_escapes_as_another_error(repo: Path) -> None:
    data = bytearray((repo / ".git" / "index").read_bytes())
    rng = random.Random(33)
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        with contextlib.suppress(Unreadable):  # anything else fails the test
            read_index(bytes(damaged[:rng.randint(12, len(damaged))]), 1000)
