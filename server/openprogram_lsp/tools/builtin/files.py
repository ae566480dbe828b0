"""File tools: read_file, list_dir, write_file, edit_file."""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.fsutil import atomic_write
from openprogram_lsp.core.types import DiffPreview
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.paths import relative, resolve_in_workspace

MAX_READ_BYTES = 256 * 1024
MAX_LIST_ENTRIES = 500


def _read_text(path: os.PathLike[str], display: str) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_READ_BYTES + 1)
    except FileNotFoundError:
        raise ToolError(f"{display}: no such file") from None
    except IsADirectoryError:
        raise ToolError(f"{display}: is a directory; use list_dir") from None
    if b"\x00" in data[:8192]:
        raise ToolError(f"{display}: binary file, not shown")
    text = data[:MAX_READ_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_READ_BYTES:
        text += f"\n[... truncated at {MAX_READ_BYTES} bytes]"
    return text


def _cap_text(text: str) -> str:
    if len(text) <= MAX_READ_BYTES:
        return text
    return text[:MAX_READ_BYTES] + f"\n[... truncated at {MAX_READ_BYTES} characters]"


MAX_EDIT_BYTES = 8 * 1024 * 1024


def _read_whole_text(path: os.PathLike[str], display: str) -> str:
    """The exact text of a file to edit: never truncated, never lossy (refuses instead)."""
    try:
        size = os.path.getsize(path)
        if size > MAX_EDIT_BYTES:
            raise ToolError(f"{display}: {size} bytes is too large to edit "
                            f"(limit {MAX_EDIT_BYTES}); use write_file or run_command")
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise ToolError(f"{display}: no such file") from None
    except IsADirectoryError:
        raise ToolError(f"{display}: is a directory") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{display}: not UTF-8 text; edit_file only changes text files") \
            from None


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
        target = resolve_in_workspace(ctx.workspace, args.path)
        if ctx.editor is not None and target.is_file():  # the editor's buffer, unsaved edits too
            text = await ctx.editor.read_text(ctx.session_id, target)
            if text is not None:
                return ToolOutput(_cap_text(text))
        return ToolOutput(_read_text(target, args.path))


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
        target = ctx.workspace.resolve() if args.path in ("", ".", "./") else \
            resolve_in_workspace(ctx.workspace, args.path)
        if not target.is_dir():
            raise ToolError(f"{args.path}: not a directory")
        names = sorted(
            e.name + ("/" if e.is_dir() else "") for e in os.scandir(target) if e.name != ".git")
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
        target = resolve_in_workspace(ctx.workspace, args.path)
        try:
            old = target.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            old = ""
        return DiffPreview(path=args.path, old_text=old, new_text=args.content)

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, WriteFileInput)
        target = resolve_in_workspace(ctx.workspace, args.path)
        if target.is_dir():
            raise ToolError(f"{args.path}: is a directory")
        existed = target.exists()
        target.parent.mkdir(parents=True, exist_ok=True)
        if ctx.editor is None or not await ctx.editor.write_text(ctx.session_id, target,
                                                                 args.content):
            atomic_write(target, args.content)
        ctx.touched(relative(ctx.workspace, target))
        verb = "Updated" if existed else "Created"
        return ToolOutput(f"{verb} {args.path} ({len(args.content.encode())} bytes)")


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

    def _apply(self, args: EditFileInput, ctx: ToolContext) -> tuple[str, str]:
        target = resolve_in_workspace(ctx.workspace, args.path)
        old = _read_whole_text(target, args.path)
        return old, _replace_once(old, args.old_text, args.new_text, args.path)

    def preview(self, args: BaseModel, ctx: ToolContext) -> DiffPreview | None:
        assert isinstance(args, EditFileInput)
        try:
            old, new = self._apply(args, ctx)
        except ToolError:
            return None
        return DiffPreview(path=args.path, old_text=old, new_text=new)

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, EditFileInput)
        target = resolve_in_workspace(ctx.workspace, args.path)
        buffer = await ctx.editor.read_text(ctx.session_id, target) \
            if ctx.editor is not None and target.is_file() else None
        _, new = self._apply(args, ctx) if buffer is None else (buffer, _replace_once(
            buffer, args.old_text, args.new_text, args.path))
        if ctx.editor is None or not await ctx.editor.write_text(ctx.session_id, target, new):
            atomic_write(target, new)
        ctx.touched(relative(ctx.workspace, target))
        return ToolOutput(f"Edited {args.path}")
