"""File tools refuse what is not a regular file (checked on the descriptor) and never block."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.tools.base import Tool, ToolContext
from openprogram_lsp.tools.builtin.files import (
    MAX_PREVIEW_BYTES,
    EditFile,
    ListDir,
    WriteFile,
)
from openprogram_lsp.tools.builtin.read import ReadFile


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace)


async def call(tool: Tool, ctx: ToolContext, **args: object) -> str:
    out = await asyncio.wait_for(tool.run(tool.parse(dict(args)), ctx), 5)
    return out.text


@pytest.fixture
def specials(workspace: Path) -> list[str]:
    os.mkfifo(workspace / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(workspace / "sock"))
    sock.close()
    return ["fifo", "sock"]


async def test_reads_refuse_fifos_and_sockets(ctx: ToolContext, specials: list[str]) -> None:
    for name in specials:
        with pytest.raises(ToolError, match="only regular files"):
            await call(ReadFile(), ctx, path=name)
    assert await call(ListDir(), ctx, path=".") == "fifo\nsock"


async def test_writes_and_previews_refuse_fifos(ctx: ToolContext, specials: list[str]) -> None:
    write, edit = WriteFile(), EditFile()
    for name in specials:
        with pytest.raises(ToolError, match=r"FIFO|socket"):
            write.preview(write.parse({"path": name, "content": "x"}), ctx)
        with pytest.raises(ToolError, match=r"FIFO|socket"):
            await call(write, ctx, path=name, content="x")
        with pytest.raises(ToolError, match=r"FIFO|socket"):
            await call(edit, ctx, path=name, old_text="a", new_text="b")
        with pytest.raises(ToolError, match=r"FIFO|socket"):
            edit.preview(edit.parse({"path": name, "old_text": "a", "new_text": "b"}), ctx)


async def test_preview_of_a_big_file_is_capped(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "big.txt").write_bytes(b"x" * (MAX_PREVIEW_BYTES + 1))
    write = WriteFile()
    diff = write.preview(write.parse({"path": "big.txt", "content": "small"}), ctx)
    assert diff is not None and diff.old_text.startswith("[existing file of")


async def test_links_inside_the_workspace_still_work(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.txt").write_text("one\n")
    os.symlink("src", workspace / "alias")
    os.symlink("a.txt", workspace / "src" / "link.txt")
    assert await call(ReadFile(), ctx, path="alias/a.txt") == "     1\tone"
    await call(WriteFile(), ctx, path="alias/link.txt", content="two\n")
    assert (workspace / "src" / "a.txt").read_text() == "two\n"  # written through the link
    assert (workspace / "src" / "link.txt").is_symlink()


async def test_write_keeps_mode_and_makes_parents(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "run.sh").write_text("echo\n")
    (workspace / "run.sh").chmod(0o750)
    await call(WriteFile(), ctx, path="run.sh", content="echo hi\n")
    assert (workspace / "run.sh").stat().st_mode & 0o777 == 0o750
    assert "Created" in await call(WriteFile(), ctx, path="a/b/c.txt", content="x")
    assert (workspace / "a/b/c.txt").read_text() == "x"
    assert [p.name for p in (workspace / "a/b").iterdir()] == ["c.txt"]  # no temp left
