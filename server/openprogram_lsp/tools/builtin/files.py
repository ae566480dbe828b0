"""File tools: read_file, list_dir, write_file, edit_file."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

from pydantic import BaseModel, Field

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.control_files import check_write
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.localfs import small_write_inline
from openprogram_lsp.core.offload import offload
from openprogram_lsp.core.turn_root import real_path
from openprogram_lsp.core.types import DiffPreview
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.paths import confined, protected_below

MAX_READ_BYTES = 256 * 1024
MAX_LIST_ENTRIES = 500
MAX_EDIT_BYTES = 8 * 1024 * 1024
MAX_PREVIEW_BYTES = 1024 * 1024


def _read_text(workspace: Path, rel: str, display: str) -> str:
    data, size = fdfs.read_bytes(workspace, rel, MAX_READ_BYTES)
    if b"\x00" in data[:8192]:
        raise ToolError(f"{display}: binary file, not shown")
    text = data.decode("utf-8", "replace")
    if size > MAX_READ_BYTES:
        text += f"\n[... truncated: showing {MAX_READ_BYTES} of {size} bytes]"
    return text


def _read_whole_text(workspace: Path, rel: str, display: str) -> str:
    """The exact text of a file to edit: never truncated, never lossy (refuses instead)."""
    data, size = fdfs.read_bytes(workspace, rel, MAX_EDIT_BYTES + 1)
    if len(data) > MAX_EDIT_BYTES:
        raise ToolError(f"{display}: {size} bytes is too large to edit "
                        f"(limit {MAX_EDIT_BYTES}); use write_file or run_command")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{display}: not UTF-8 text; edit_file only changes text files") \
            from None


async def _write(workspace: Path, rel: str, data: bytes) -> bool:
    """``fdfs.write_atomic`` of a tool: inline on the loop for a small file on a local
    filesystem (``core.localfs``: there the thread hop costs more than the write), else on a
    worker thread. Inline, a cancel asked meanwhile lands after the write, which the tool then
    reports (and notes for the checkpoint) as done; on a thread the write goes on however the
    waiting coroutine is cut."""
    if small_write_inline(real_path(workspace), rel, len(data)):
        return fdfs.write_atomic(workspace, rel, data)
    return await offload(fdfs.write_atomic, workspace, rel, data)


def _preview_old(workspace: Path, rel: str) -> str:
    """The current text of a file about to be overwritten, for the approval card (capped)."""
    try:
        data, size = fdfs.read_bytes(workspace, rel, MAX_PREVIEW_BYTES)
    except ToolError as exc:
        if "no such file" in exc.message:
            return ""
        raise
    if size > MAX_PREVIEW_BYTES:
        return f"[existing file of {size} bytes, not shown]\n"
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return f"[existing binary file of {size} bytes, not shown]\n"


def _cap_text(text: str) -> str:
    if len(text) <= MAX_READ_BYTES:
        return text
    return text[:MAX_READ_BYTES] + f"\n[... truncated at {MAX_READ_BYTES} characters]"


def _is_regular(workspace: Path, rel: str) -> bool:
    st = fdfs.lstat(workspace, rel)
    return st is not None and stat.S_ISREG(st.st_mode)


async def _editor_write(ctx: ToolContext, rel: str, content: str) -> bool:
    """Write through the editor (ACP ``fs/write_text_file``) when it offers that."""
    assert ctx.editor is not None
    check_write(rel, rel)
    st = fdfs.lstat(ctx.workspace, rel)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise ToolError(f"{rel}: is {fdfs.kind_of(st.st_mode)}; only regular files are written")
    parts = fdfs.split(rel)
    with fdfs.open_dir(ctx.workspace, parts[:-1], create=True, rel=rel):
        pass  # parents made by the same walk
    return await ctx.editor.write_text(ctx.session_id, ctx.workspace.resolve() / rel, content)


UNSAVED_NOTE = ("[unsaved changes in the editor: this is the editor's buffer, which differs "
                "from the file on disk]\n")


def _unsaved(ctx: ToolContext, rel: str) -> str | None:
    """The editor's buffer of ``rel`` when it holds changes not on disk (LSP document sync)."""
    if ctx.buffers is None:
        return None
    return ctx.buffers.unsaved(ctx.session_id, ctx.workspace.resolve() / rel)


async def _buffer_write(ctx: ToolContext, rel: str, display: str, old: str, new: str) -> None:
    """Make the change in the editor's unsaved buffer (never over the user's unsaved work)."""
    assert ctx.buffers is not None
    check_write(rel, display)
    why = await ctx.buffers.apply(ctx.session_id, ctx.workspace.resolve() / rel, old, new)
    if why:
        raise ToolError(f"{display}: has unsaved changes in the editor and {why}; "
                        "save or revert them, then try again")


def _replace_once(text: str, old_text: str, new_text: str, display: str) -> str:
    """Replace the one occurrence of ``old_text``; refuse none, several or an empty one."""
    if not old_text:
        raise ToolError(f"{display}: old_text is empty")
    count = text.count(old_text)
    if count == 0:
        raise ToolError(f"{display}: old_text not found in the file")
    if count > 1:
        raise ToolError(f"{display}: old_text occurs {count} times; include more context "
                        "so that it is unique")
    return text.replace(old_text, new_text, 1)


class ReadFileInput(BaseModel):
    path: str = Field(description="File path relative to the workspace root")


class ReadFile(Tool):
    name = "read_file"
    description = "Read a text file of the workspace."
    kind = "read"
    Input = ReadFileInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, ReadFileInput)
        return f"Read {args.path}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, ReadFileInput)
        rel = confined(ctx.workspace, args.path)
        unsaved = _unsaved(ctx, rel)
        if unsaved is not None:
            return ToolOutput(UNSAVED_NOTE + _cap_text(unsaved))
        if ctx.editor is not None and _is_regular(ctx.workspace, rel):
            # the editor's buffer, unsaved edits too
            text = await ctx.editor.read_text(ctx.session_id, ctx.workspace.resolve() / rel)
            if text is not None:
                return ToolOutput(_cap_text(text))
        return ToolOutput(await asyncio.to_thread(_read_text, ctx.workspace, rel, args.path))


def _list(workspace: Path, rel: str, display: str) -> list[str]:
    try:
        with fdfs.open_dir(workspace, fdfs.split(rel), rel=display) as fd, \
                os.scandir(fd) as it:
            hidden = {d for d in protected_below(workspace, rel) if "/" not in d}
            return sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "")
                          for e in it if e.name != ".git" and e.name not in hidden)
    except FileNotFoundError:
        raise ToolError(f"{display}: no such directory") from None


class ListDirInput(BaseModel):
    path: str = Field(".", description="Directory relative to the workspace root")


class ListDir(Tool):
    name = "list_dir"
    description = "List a directory of the workspace (directories end with '/')."
    kind = "read"
    Input = ListDirInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, ListDirInput)
        return f"List {args.path}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, ListDirInput)
        rel = "." if args.path in ("", ".", "./") else confined(ctx.workspace, args.path)
        names = await asyncio.to_thread(_list, ctx.workspace, rel, args.path)
        more = len(names) - MAX_LIST_ENTRIES
        text = "\n".join(names[:MAX_LIST_ENTRIES]) or "(empty)"
        if more > 0:
            text += f"\n[... {more} more]"
        return ToolOutput(text)


class WriteFileInput(BaseModel):
    path: str = Field(description="File path relative to the workspace root")
    content: str = Field(description="The whole new content of the file")


class WriteFile(Tool):
    name = "write_file"
    description = "Create or overwrite a file of the workspace with the given content."
    kind = "edit"
    Input = WriteFileInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, WriteFileInput)
        return f"Write {args.path}"

    def preview(self, args: BaseModel, ctx: ToolContext) -> DiffPreview | None:
        assert isinstance(args, WriteFileInput)
        rel = confined(ctx.workspace, args.path)
        unsaved = _unsaved(ctx, rel)
        if unsaved is not None:
            return DiffPreview(path=args.path, old_text=unsaved, new_text=args.content,
                               unsaved_changes=True)
        old = _preview_old(ctx.workspace, rel)
        return DiffPreview(path=args.path, old_text=old, new_text=args.content)

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, WriteFileInput)
        rel = confined(ctx.workspace, args.path)
        unsaved = _unsaved(ctx, rel)
        if unsaved is not None:
            await _buffer_write(ctx, rel, args.path, unsaved, args.content)
            return ToolOutput(f"Wrote {args.path} in the editor's buffer, which had unsaved "
                              "changes; it is not saved to disk yet")
        if ctx.editor is None:  # one walk of the path: the write says whether it existed
            existed = await _write(ctx.workspace, rel, args.content.encode("utf-8"))
        else:
            existed = fdfs.lstat(ctx.workspace, rel) is not None
            if not await _editor_write(ctx, rel, args.content):
                existed = await _write(ctx.workspace, rel, args.content.encode("utf-8"))
        ctx.touched(rel)
        verb = "Updated" if existed else "Created"
        return ToolOutput(f"{verb} {args.path} ({len(args.content.encode())} bytes)")


class EditFileInput(BaseModel):
    path: str = Field(description="File path relative to the workspace root")
    old_text: str = Field(description="Exact text to replace; must occur exactly once")
    new_text: str = Field(description="Replacement text")


class EditFile(Tool):
    name = "edit_file"
    description = "Replace one exact, unique occurrence of old_text with new_text in a file."
    kind = "edit"
    Input = EditFileInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, EditFileInput)
        return f"Edit {args.path}"

    def _apply(self, args: EditFileInput, ctx: ToolContext) -> tuple[str, str, str]:
        rel = confined(ctx.workspace, args.path)
        old = _read_whole_text(ctx.workspace, rel, args.path)
        return rel, old, _replace_once(old, args.old_text, args.new_text, args.path)

    def preview(self, args: BaseModel, ctx: ToolContext) -> DiffPreview | None:
        assert isinstance(args, EditFileInput)
        rel = confined(ctx.workspace, args.path)
        unsaved = _unsaved(ctx, rel)
        if unsaved is not None:  # the edit as it will be made: in the buffer the user sees
            new = _replace_once(unsaved, args.old_text, args.new_text, args.path)
            return DiffPreview(path=args.path, old_text=unsaved, new_text=new,
                               unsaved_changes=True)
        _, old, new = self._apply(args, ctx)  # an edit that cannot apply is refused unasked
        return DiffPreview(path=args.path, old_text=old, new_text=new)

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, EditFileInput)
        rel = confined(ctx.workspace, args.path)
        unsaved = _unsaved(ctx, rel)
        if unsaved is not None:
            new = _replace_once(unsaved, args.old_text, args.new_text, args.path)
            await _buffer_write(ctx, rel, args.path, unsaved, new)
            return ToolOutput(f"Edited {args.path} in the editor's buffer, which had unsaved "
                              "changes; it is not saved to disk yet")
        # a small file on a local disk is read inline (its size asked only there: on a
        # network filesystem even the lstat waits on a thread)
        root = real_path(ctx.workspace)
        st = fdfs.lstat(ctx.workspace, rel) if small_write_inline(root, rel, 0) else None
        if st is not None and small_write_inline(root, rel, st.st_size):
            rel, old, new = self._apply(args, ctx)
        else:
            rel, old, new = await asyncio.to_thread(self._apply, args, ctx)
        buffer = await ctx.editor.read_text(ctx.session_id, ctx.workspace.resolve() / rel) \
            if ctx.editor is not None and _is_regular(ctx.workspace, rel) else None
        if buffer is not None and buffer != old:  # the approved diff was made from the disk
            raise ToolError(f"{args.path}: has unsaved changes in the editor; save or revert "
                            "them, then try again")
        if ctx.editor is None or not await _editor_write(ctx, rel, new):
            await _write(ctx.workspace, rel, new.encode("utf-8"))
        ctx.touched(rel)
        return ToolOutput(f"Edited {args.path}")
