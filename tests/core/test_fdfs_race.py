"""A hostile process swaps a directory and a symlink out of the workspace while tools write.

The swapper is a real process calling ``renameat2(RENAME_EXCHANGE)`` in a tight loop; write,
edit and restore run against the swapped name for a bounded time and nothing may land outside.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.store._cp_helpers import open_store

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin.files import EditFile, WriteFile

RACE_SECONDS = 1.0

SWAPPER = r"""
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
print("ready", flush=True)
while True:
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        if err != errno.ENOENT:  # a restore may have one name aside for a moment: swap on
            raise SystemExit(f"renameat2: {os.strerror(err)}")
"""


@contextlib.contextmanager
def swapping(a: Path, b: Path) -> Iterator[None]:
    proc = subprocess.Popen([sys.executable, "-c", SWAPPER, str(a), str(b)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        yield
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
        proc.wait(timeout=5)


@pytest.fixture
def arena(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with ``d/`` (a real directory) and ``l`` (a symlink to ``outside/``)."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    (ws / "d" / "victim.txt").write_text("needle\n")
    (outside / "victim.txt").write_text("needle\n")
    os.symlink(outside, ws / "l")
    return ws, outside


def _outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "needle\n"


def _until(deadline: float) -> Iterator[int]:
    i = 0
    while time.monotonic() < deadline:
        yield i
        i += 1


def test_fd_writes_never_land_outside(arena: tuple[Path, Path]) -> None:
    ws, outside = arena
    done = failed = 0
    with swapping(ws / "d", ws / "l"):
        for i in _until(time.monotonic() + RACE_SECONDS):
            try:
                fdfs.write_atomic(ws, f"d/new{i % 50}.txt", b"x")
                fdfs.write_atomic(ws, "d/victim.txt", b"overwritten\n")
                done += 1
            except OpenProgramError:
                failed += 1
    _outside_untouched(outside)
    assert done > 0 and failed > 0  # the race was really run: some calls saw the symlink


async def test_write_and_edit_tools_never_land_outside(arena: tuple[Path, Path]) -> None:
    ws, outside = arena
    ctx = ToolContext(workspace=ws)
    write, edit = WriteFile(), EditFile()
    with swapping(ws / "d", ws / "l"):
        for i in _until(time.monotonic() + RACE_SECONDS):
            with contextlib.suppress(OpenProgramError):
                await write.run(write.parse({"path": f"d/w{i % 50}.txt", "content": "x"}), ctx)
            with contextlib.suppress(OpenProgramError):
                await edit.run(edit.parse({"path": "d/victim.txt", "old_text": "needle",
                                           "new_text": "needle"}), ctx)
    _outside_untouched(outside)


def test_restore_never_lands_outside(arena: tuple[Path, Path], tmp_path: Path) -> None:
    ws, outside = arena
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    for i in range(20):
        (ws / "d" / f"r{i}.txt").write_text(f"{i}\n")
    store.note_all()
    cp = store.commit_turn("s", "t1", "t1")
    assert cp is not None
    for i in range(20):
        (ws / "d" / f"r{i}.txt").unlink()
    (ws / "d" / "victim.txt").write_text("changed\n")
    store.note_all()
    store.commit_turn("s", "t2", "t2")
    with swapping(ws / "d", ws / "l"):
        for _ in _until(time.monotonic() + RACE_SECONDS):
            # the safety checkpoint's own scan may also trip over the swapping (OSError)
            with contextlib.suppress(OpenProgramError, OSError):
                store.restore(cp.id)
    _outside_untouched(outside)
