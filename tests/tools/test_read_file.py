"""read_file: numbered pages, reading on, long lines, byte cap, binaries and images."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ToolError, WorkspaceEscape
from openprogram_lsp.tools.base import ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.descriptions import READ_PAGE_BYTES, READ_PAGE_LINES
from openprogram_lsp.tools.builtin.read import ReadFile


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace)


async def read(ctx: ToolContext, **args: object) -> ToolOutput:
    tool = ReadFile()
    return await tool.run(tool.parse(dict(args)), ctx)


def numbered(first: int, lines: list[str]) -> str:
    return "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(lines, first))


async def test_a_small_file_is_numbered_and_whole(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n\ny = 2\n")
    out = await read(ctx, path="a.py")
    assert out.text == "     1\tx = 1\n     2\t\n     3\ty = 2"
    assert out.data == {"start_line": 1, "num_lines": 3, "total_lines": 3, "next_offset": None}


async def test_the_default_page_says_how_to_read_on(ctx: ToolContext, workspace: Path) -> None:
    lines = [f"line {i}" for i in range(1, 5001)]
    (workspace / "big.txt").write_text("\n".join(lines) + "\n")
    out = await read(ctx, path="big.txt")
    assert out.text.startswith(numbered(1, lines[:3]))
    assert out.text.endswith(f"{READ_PAGE_LINES:>6}\tline {READ_PAGE_LINES}\n"
                             f"[showing lines 1-{READ_PAGE_LINES} of 5,000; read on with "
                             f"offset={READ_PAGE_LINES + 1}]")
    assert out.data["next_offset"] == READ_PAGE_LINES + 1
    ranged = await read(ctx, path="big.txt", offset=3999, limit=3)
    assert ranged.text == (numbered(3999, lines[3998:4001])
                           + "[showing lines 3999-4001 of 5,000; read on with offset=4002]")
    tail = await read(ctx, path="big.txt", offset=4999)
    assert tail.text == numbered(4999, lines[4998:]).rstrip("\n")
    past = await read(ctx, path="big.txt", offset=6000)
    assert past.text == "[the file has 5000 lines; offset 6000 is past the end]"


async def test_long_lines_are_cut_and_a_page_is_byte_capped(ctx: ToolContext,
                                                           workspace: Path) -> None:
    (workspace / "min.js").write_text("a" * 50_000 + "\nshort\n")
    out = await read(ctx, path="min.js")
    first, second = out.text.split("\n")[:2]
    assert first == "     1\t" + "a" * 2000 + " [... line cut: 48,000 more characters]"
    assert second == "     2\tshort"
    assert "1 long lines cut" in out.text
    wide = ["é" * 1500] * 200  # 3 KB a line: the page stops at the byte cap, not 2,000 lines
    (workspace / "wide.txt").write_text("\n".join(wide) + "\n")
    page = await read(ctx, path="wide.txt")
    assert len(page.text.encode()) <= READ_PAGE_BYTES + 200
    shown = page.data["num_lines"]
    assert isinstance(shown, int) and 0 < shown < 200
    assert f"cap was reached; read on with offset={shown + 1}]" in page.text


async def test_one_enormous_line_is_not_held_whole(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "blob.txt").write_bytes(b"x" * (20 * 1024 * 1024) + b"\nend\n")
    out = await read(ctx, path="blob.txt", offset=2)
    assert out.text == "     2\tend"


async def test_binaries_and_images_are_described(ctx: ToolContext, workspace: Path) -> None:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 640, 480, 8, 2, 0, 0, 0))
           + chunk(b"IEND", b""))
    (workspace / "shot.png").write_bytes(png)
    out = await read(ctx, path="shot.png")
    assert out.text.startswith(f"shot.png: PNG image, 640x480 pixels, {len(png)} bytes")
    assert out.data["binary"] == "image/png"
    gif = b"GIF89a" + struct.pack("<HH", 16, 9) + b"\x00" * 20
    (workspace / "a.gif").write_bytes(gif)
    assert "GIF image, 16x9 pixels" in (await read(ctx, path="a.gif")).text
    jpeg = (b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
            + b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 300, 200) + b"\x00" * 12)
    (workspace / "p.jpg").write_bytes(jpeg)
    assert "JPEG image, 200x300 pixels" in (await read(ctx, path="p.jpg")).text
    (workspace / "x.bin").write_bytes(b"\x01\x02\x00\x03" * 10)
    assert (await read(ctx, path="x.bin")).text == \
        "x.bin: binary file (application/octet-stream), 40 bytes"
    (workspace / "BMI.md").write_text("BMI is weight over height squared\n")  # not a bitmap
    assert (await read(ctx, path="BMI.md")).text.startswith("     1\tBMI is")


async def test_empty_files_and_errors(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "empty.txt").write_text("")
    assert (await read(ctx, path="empty.txt")).text == "[empty file]"
    with pytest.raises(ToolError, match="no such file"):
        await read(ctx, path="missing.txt")
    with pytest.raises(WorkspaceEscape):
        await read(ctx, path="../outside.txt")
    with pytest.raises(ToolError, match="offset"):
        ReadFile().parse({"path": "a", "offset": 0})


async def test_an_unsaved_buffer_is_paged_too(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.txt").write_text("disk\n")

    class Buffers:
        def unsaved(self, session_id: str, path: Path) -> str | None:
            return "one\ntwo\nthree\n" if path.name == "a.txt" else None

    ctx.buffers = Buffers()  # type: ignore[assignment]
    out = await read(ctx, path="a.txt", offset=2, limit=1)
    assert out.text.startswith("[unsaved changes in the editor")
    assert out.text.endswith("     2\ttwo\n[showing lines 2-2 of 3; read on with offset=3]")
