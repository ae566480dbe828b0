"""The write and edit tools' file work: inline on the loop for a small file on a local disk,
on a worker thread otherwise; the same checks either way."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from openprogram_lsp.core import fdfs, localfs
from openprogram_lsp.core.errors import WorkspaceEscape
from openprogram_lsp.core.localfs import INLINE_BYTES, parse_mountinfo
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.registry import ToolRegistry


def _root_is(monkeypatch: pytest.MonkeyPatch, fstype: str) -> None:
    mounts = localfs._Mounts()
    mounts._table = parse_mountinfo(f"27 1 254:0 / / rw - {fstype} /dev/x rw\n")
    monkeypatch.setattr(mounts, "_refresh", lambda: None)
    monkeypatch.setattr(localfs, "_mounts", mounts)


@pytest.fixture
def where(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which thread each write and each edit's read ran on: "loop" or "thread"."""
    seen: list[str] = []
    loop_thread = threading.get_ident()
    real_write, real_read = fdfs.write_atomic, fdfs.read_bytes

    def mark() -> None:
        seen.append("loop" if threading.get_ident() == loop_thread else "thread")

    def write_atomic(*a: object, **k: object) -> bool:
        mark()
        return real_write(*a, **k)  # type: ignore[arg-type]

    def read_bytes(*a: object, **k: object) -> tuple[bytes, int]:
        mark()
        return real_read(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(fdfs, "write_atomic", write_atomic)
    monkeypatch.setattr(fdfs, "read_bytes", read_bytes)
    return seen


async def _call(ws: Path, name: str, **args: object) -> str:
    touched: list[str] = []
    ctx = ToolContext(workspace=ws, on_paths_changed=lambda p: touched.extend(p) or None)
    tool = ToolRegistry(builtin_tools()).get(name)
    assert tool is not None
    out = await tool.run(tool.parse(dict(args)), ctx)
    assert touched == [args["path"]]
    return out.text


async def test_a_small_write_on_a_local_disk_runs_inline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: list[str]) -> None:
    _root_is(monkeypatch, "ext4")
    assert "Created" in await _call(tmp_path, "write_file", path="src/a.txt", content="one\n")
    await _call(tmp_path, "edit_file", path="src/a.txt", old_text="one", new_text="two")
    assert (tmp_path / "src" / "a.txt").read_text() == "two\n"
    assert where == ["loop", "loop", "loop"]  # the write, the edit's read, its write
    big = "x" * (INLINE_BYTES + 1)
    await _call(tmp_path, "write_file", path="big.txt", content=big)
    assert where[3:] == ["thread"]
    assert (tmp_path / "big.txt").read_text() == big


async def test_a_write_on_a_network_filesystem_goes_to_a_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: list[str]) -> None:
    _root_is(monkeypatch, "nfs4")
    await _call(tmp_path, "write_file", path="a.txt", content="one\n")
    await _call(tmp_path, "edit_file", path="a.txt", old_text="one", new_text="two")
    assert where == ["thread", "thread", "thread"]
    assert (tmp_path / "a.txt").read_text() == "two\n"


async def test_an_inline_write_keeps_every_check(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _root_is(monkeypatch, "ext4")
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ws / "link")
    with pytest.raises(WorkspaceEscape):
        await _call(ws, "write_file", path="link/a.txt", content="x")
    assert list(outside.iterdir()) == []
    (outside / "t.txt").write_text("secret\n")
    os.symlink(outside / "t.txt", ws / "t.txt")
    with pytest.raises(WorkspaceEscape):
        await _call(ws, "edit_file", path="t.txt", old_text="secret", new_text="gone")
    assert (outside / "t.txt").read_text() == "secret\n"
