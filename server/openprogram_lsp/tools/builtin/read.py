"""read_file: one page of a file, numbered like ``cat -n``, saying how to read on.

A page is at most ``limit`` lines (default 2,000) and ``READ_PAGE_BYTES`` of text; a line
longer than ``READ_LINE_CHARS`` is cut with a note. The file is streamed a bounded line at a
time, so a ranged read of a huge file (or one giant minified line) holds one page in memory;
lines after the page are counted (up to ``COUNT_BYTES`` of file) so the footer can give the
total. Other binary files are described from their first bytes, never decoded; a PNG, JPEG, GIF
or WebP image is also returned as an image (stored by content), which a model that sees gets.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, Field

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.filetypes import HEAD_BYTES, Binary, sniff
from openprogram_lsp.core.images import MAX_IMAGE_BYTES, ImageBlobs, ImageError
from openprogram_lsp.core.model import Model
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.descriptions import (
    READ_FILE,
    READ_LINE_CHARS,
    READ_PAGE_BYTES,
    READ_PAGE_LINES,
)
from openprogram_lsp.tools.paths import confined

COUNT_BYTES = 64 * 1024 * 1024  # past the page, at most this much more is read to count lines
_CHUNK = 64 * 1024
UNSAVED_NOTE = ("[unsaved changes in the editor: this is the editor's buffer, which differs "
                "from the file on disk]\n")


class ReadFileInput(Model):
    path: str = Field(description="File path relative to the workspace root")
    offset: int | None = Field(None, ge=1, description="1-based number of the first line to "
                               "read (default 1)")
    limit: int | None = Field(None, ge=1, le=100_000, description="How many lines to read "
                              f"(default {READ_PAGE_LINES})")


@dataclass(slots=True)
class Page:
    """One page of numbered lines and what the footer says about the rest."""

    lines: list[str]
    first: int  # the number of the first line shown
    total: int | None  # lines in the file (None: not all counted)
    next_offset: int | None  # where to read on (None: the page reached the end)
    cut_lines: int = 0  # lines cut at READ_LINE_CHARS
    byte_capped: bool = False

    def text(self) -> str:
        body = "".join(self.lines)
        if self.next_offset is None:
            if not self.lines:
                if self.total == 0:
                    return "[empty file]"
                return (f"[the file has {self.total} lines; offset {self.first} is past the "
                        "end]")
            note = f"[{self.cut_lines} long lines cut at {READ_LINE_CHARS} characters]" \
                if self.cut_lines else ""
            return body + note if note else body.rstrip("\n")
        shown = len(self.lines)
        of = f" of {self.total:,}" if self.total is not None else " (more follow)"
        why = f"; this call's {READ_PAGE_BYTES // 1024} KB cap was reached" \
            if self.byte_capped else ""
        cut = f"; {self.cut_lines} long lines cut" if self.cut_lines else ""
        return (f"{body}[showing lines {self.first}-{self.first + shown - 1}{of}{why}{cut}; "
                f"read on with offset={self.next_offset}]")

    def data(self) -> dict[str, int | None]:
        return {"start_line": self.first, "num_lines": len(self.lines),
                "total_lines": self.total, "next_offset": self.next_offset}


def paginate(lines: Iterable[tuple[str, int]], offset: int, limit: int,
             rest: Callable[[], int | None] | None = None) -> Page:
    """Number the lines from ``offset`` on, at most ``limit`` lines and ``READ_PAGE_BYTES``;
    ``lines`` yields each line's (possibly shortened) text without its end, and its length;
    ``rest`` counts the lines left after the page (None: too many to count)."""
    out: list[str] = []
    used = 0
    cut = 0
    seen = 0
    next_offset: int | None = None
    capped = False
    it = iter(lines)
    for number, (text, length) in enumerate(it, 1):
        seen = number
        if number < offset:
            continue
        if length > READ_LINE_CHARS:
            text = (f"{text[:READ_LINE_CHARS]} [... line cut: {length - READ_LINE_CHARS:,} "
                    "more characters]")
            cut += 1
        row = f"{number:>6}\t{text}\n"
        size = len(row.encode("utf-8", "replace"))
        if len(out) >= limit or (out and used + size > READ_PAGE_BYTES):
            next_offset = number
            capped = len(out) < limit
            left = rest() if rest is not None else sum(1 for _ in it)
            seen = number + left if left is not None else -1
            break
        out.append(row)
        used += size
    return Page(out, offset, seen if seen >= 0 else None, next_offset, cut, capped)


class _DiskLines:
    """A file's lines from a buffered reader, each at most ``READ_LINE_CHARS * 4`` bytes kept
    (the rest of a longer line is skipped but counted)."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh

    def __iter__(self) -> Iterator[tuple[str, int]]:
        keep = READ_LINE_CHARS * 4 + 4  # bytes: enough for READ_LINE_CHARS characters
        while raw := self.fh.readline(keep):
            length = len(raw)
            more = raw
            while not more.endswith(b"\n"):
                more = self.fh.readline(_CHUNK)
                if not more:
                    break
                length += len(more)
            text = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")
            if length > len(raw):  # the kept head was cut: say how long the line was
                length -= 2 if more.endswith(b"\r\n") else 1 if more.endswith(b"\n") else 0
                yield text, max(len(text) + (length - len(raw)), READ_LINE_CHARS + 1)
            else:
                yield text, len(text)

    def rest(self) -> int | None:
        """The lines after the last one read (None when more than ``COUNT_BYTES`` remain)."""
        count, read, last = 0, 0, b"\n"
        while chunk := self.fh.read(1024 * 1024):
            count += chunk.count(b"\n")
            last = chunk[-1:]
            read += len(chunk)
            if read > COUNT_BYTES:
                return None
        return count + (last != b"\n")


def _text_lines(text: str) -> Iterator[tuple[str, int]]:
    for line in text.splitlines():
        yield line, len(line)


def _binary(fd: int, kind: Binary, size: int, display: str,
            images: ImageBlobs | None) -> ToolOutput:
    """A binary file described; an image (PNG, JPEG, GIF, WebP) also stored by content and
    returned as an image, shown to a model that sees (the others get the description)."""
    data: dict[str, Any] = {"binary": kind.mime, "size": size}
    if not kind.is_image:
        return ToolOutput(f"{display}: {kind.describe(size)}", data=data)
    why = "this session keeps no images" if images is None else ""
    if images is not None:
        try:
            if size > MAX_IMAGE_BYTES:
                raise ImageError(f"over {MAX_IMAGE_BYTES // (1024 * 1024)} MB")
            with os.fdopen(os.dup(fd), "rb") as fh:
                part = images.put(fh.read(MAX_IMAGE_BYTES + 1), display.rsplit("/", 1)[-1])
            small = f"; downscaled to {part.width}x{part.height}, {part.size:,} bytes, to " \
                "fit the models' limits" if part.original is not None else ""
            return ToolOutput(f"{display}: {kind.describe(size)} (attached as an image{small})",
                              data={**data, "images": [part]})
        except ImageError as exc:
            why = exc.message
    return ToolOutput(f"{display}: {kind.describe(size)} (not shown as an image: {why}; "
                      "describe what you need)", data=data)


def _from_disk(workspace: Path, rel: str, display: str, offset: int, limit: int,
               images: ImageBlobs | None = None) -> ToolOutput:
    with fdfs.open_regular(workspace, rel) as fd:
        size = os.fstat(fd).st_size
        head = os.pread(fd, HEAD_BYTES, 0)
        kind = sniff(head)
        if kind is not None:
            return _binary(fd, kind, size, display, images)
        with os.fdopen(os.dup(fd), "rb", buffering=_CHUNK) as fh:
            lines = _DiskLines(fh)
            page = paginate(lines, offset, limit, lines.rest)
    return ToolOutput(page.text(), data=page.data())


def _binary_on_disk(workspace: Path, rel: str, display: str,
                    images: ImageBlobs | None = None) -> ToolOutput | None:
    """A binary file described (an image returned), when it is one (before asking the editor
    for text)."""
    with fdfs.open_regular(workspace, rel) as fd:
        size = os.fstat(fd).st_size
        kind = sniff(os.pread(fd, HEAD_BYTES, 0))
        return None if kind is None else _binary(fd, kind, size, display, images)


class ReadFile(Tool):
    name = "read_file"
    description = READ_FILE
    kind = "read"
    Input = ReadFileInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, ReadFileInput)
        if args.offset or args.limit:
            first = args.offset or 1
            last = f"{first + args.limit - 1}" if args.limit else ""
            return f"Read {args.path}:{first}-{last}"
        return f"Read {args.path}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, ReadFileInput)
        rel = confined(ctx.workspace, args.path)
        offset, limit = args.offset or 1, args.limit or READ_PAGE_LINES
        if ctx.buffers is not None:
            unsaved = ctx.buffers.unsaved(ctx.session_id, ctx.workspace.resolve() / rel)
            if unsaved is not None:
                page = paginate(_text_lines(unsaved), offset, limit)
                return ToolOutput(UNSAVED_NOTE + page.text(), data=page.data())
        if ctx.editor is not None:  # the editor's buffer (ACP), unsaved edits too
            st = fdfs.lstat(ctx.workspace, rel)
            if st is not None and stat.S_ISREG(st.st_mode):
                binary = await asyncio.to_thread(_binary_on_disk, ctx.workspace, rel, args.path,
                                                 ctx.images)
                if binary is not None:
                    return binary
                text = await ctx.editor.read_text(ctx.session_id, ctx.workspace.resolve() / rel)
                if text is not None:
                    page = paginate(_text_lines(text), offset, limit)
                    return ToolOutput(page.text(), data=page.data())
        return await asyncio.to_thread(_from_disk, ctx.workspace, rel, args.path, offset, limit,
                                       ctx.images)
