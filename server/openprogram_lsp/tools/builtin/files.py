"""File tools: list_dir, write_file, edit_file and multi_edit (read_file is in ``read``)."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, Field

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.control_files import check_write
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.localfs import small_write_inline
from openprogram_lsp.core.model import Model
from openprogram_lsp.core.offload import offload
from openprogram_lsp.core.turn_root import real_path
from openprogram_lsp.core.types import DiffPreview
from openprogram_lsp.tools.approved_edit import ApprovedEdit
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.descriptions import EDIT_FILE, LIST_DIR, MULTI_EDIT, WRITE_FILE
from openprogram_lsp.tools.paths import WritePath, confined, protected_below

MAX_LIST_ENTRIES = 500
MAX_EDIT_BYTES = 8 * 1024 * 1024
MAX_PREVIEW_BYTES = 1024 * 1024


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


def _preview_old(workspace: Path, rel: str) -> tuple[str, bool]:
    """The current text of a file about to be overwritten, for the approval card (capped),
    and whether it is the file's exact text (else a stand-in line)."""
    try:
        data, size = fdfs.read_bytes(workspace, rel, MAX_PREVIEW_BYTES)
    except ToolError as exc:
        if "no such file" in exc.message:
            return "", True
        raise
    if size > MAX_PREVIEW_BYTES:
        return f"[existing file of {size} bytes, not shown]\n", False
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return f"[existing binary file of {size} bytes, not shown]\n", False


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


def _unsaved(ctx: ToolContext, rel: str) -> str | None:
    """The editor's buffer of ``rel`` when it holds changes not on disk (LSP document sync)."""
    if ctx.buffers is None:
        return None
    return ctx.buffers.unsaved(ctx.session_id, ctx.workspace.resolve() / rel)


async def _buffer_write(ctx: ToolContext, rel: str, display: str, old: str, new: str) -> None:
    """Make the change in the editor's unsaved buffer (never over the user's unsaved work)."""
    assert ctx.buffers is not None
    check_write(rel, display)
    if ctx.on_buffer_edit is not None:  # the checkpoints record the buffer, before and after
        await ctx.on_buffer_edit(rel)
    why = await ctx.buffers.apply(ctx.session_id, ctx.workspace.resolve() / rel, old, new)
    if why:
        raise ToolError(f"{display}: has unsaved changes in the editor and {why}; "
                        "save or revert them, then try again")
    ctx.touched(rel)


async def _current_text(ctx: ToolContext, rel: str, display: str) -> str | None:
    """The whole text of ``rel`` now (None: no such file): read inline when small on a local
    disk (its size asked only there: on a network filesystem even the lstat waits on a
    thread), else on a worker thread."""
    root = real_path(ctx.workspace)
    if small_write_inline(root, rel, 0):
        st = fdfs.lstat(ctx.workspace, rel)
        if st is None:
            return None
        if small_write_inline(root, rel, st.st_size):
            return _read_whole_text(ctx.workspace, rel, display)

    def read() -> str | None:
        if fdfs.lstat(ctx.workspace, rel) is None:
            return None
        return _read_whole_text(ctx.workspace, rel, display)

    return await asyncio.to_thread(read)


async def _write_approved(ctx: ToolContext, rel: str, display: str,
                          approved: ApprovedEdit) -> bool | None:
    """Write what the user approved, only where the text is still the one they were shown:
    into the editor's unsaved buffer (None) or the file (whether it existed)."""
    unsaved = _unsaved(ctx, rel)
    if unsaved is not None:
        approved.check(unsaved, in_buffer=True)
        await _buffer_write(ctx, rel, display, unsaved, approved.new_text)
        return None
    current = await _current_text(ctx, rel, display)
    existed = current is not None
    approved.check(current, in_buffer=False)
    if ctx.editor is not None and existed and _is_regular(ctx.workspace, rel):
        buffer = await ctx.editor.read_text(ctx.session_id, ctx.workspace.resolve() / rel)
        if buffer is not None and buffer != current:
            raise ToolError(f"{display}: has unsaved changes in the editor; save or revert "
                            "them, then try again")
    if ctx.editor is None or not await _editor_write(ctx, rel, approved.new_text):
        await _write(ctx.workspace, rel, approved.new_text.encode("utf-8"))
    ctx.touched(rel)
    return existed


def _with_note(text: str, approved: ApprovedEdit) -> ToolOutput:
    note = approved.note()
    return ToolOutput(f"{text}\n\n{note}" if note else text)


def _replace(text: str, old_text: str, new_text: str, display: str, *,
             replace_all: bool = False, which: str = "") -> str:
    """Replace the one occurrence of ``old_text`` (every one with ``replace_all``); refuse
    none, several (unless ``replace_all``), an empty one or a no-op. ``which`` names the edit
    of a multi_edit in the errors."""
    if not old_text:
        raise ToolError(f"{display}: {which}old_text is empty")
    if old_text == new_text:
        raise ToolError(f"{display}: {which}old_text and new_text are the same; nothing to "
                        "change")
    count = text.count(old_text)
    if count == 0:
        hint = " (it may have been changed by an earlier edit of this call)" if which else ""
        raise ToolError(f"{display}: {which}old_text not found in the file{hint}; read the "
                        "file again and copy the text exactly")
    if count > 1 and not replace_all:
        raise ToolError(f"{display}: {which}old_text occurs {count} times; include more "
                        "context so that it is unique, or set replace_all to change every "
                        "occurrence")
    return text.replace(old_text, new_text, -1 if replace_all else 1)


def _list(workspace: Path, rel: str, display: str) -> list[str]:
    try:
        with fdfs.open_dir(workspace, fdfs.split(rel), rel=display) as fd, \
                os.scandir(fd) as it:
            hidden = {d for d in protected_below(workspace, rel) if "/" not in d}
            return sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "")
                          for e in it if e.name != ".git" and e.name not in hidden)
    except FileNotFoundError:
        raise ToolError(f"{display}: no such directory") from None


class ListDirInput(Model):
    path: str = Field(".", description="Directory relative to the workspace root")


class ListDir(Tool):
    name = "list_dir"
    description = LIST_DIR
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


class WriteFileInput(Model):
    path: WritePath = Field(description="File path relative to the workspace root")
    content: str = Field(description="The whole new content of the file")


class WriteFile(Tool):
    name = "write_file"
    description = WRITE_FILE
    kind = "edit"
    writes = ("path",)
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
        old, exact = _preview_old(ctx.workspace, rel)
        return DiffPreview(path=args.path, old_text=old, new_text=args.content, exact=exact)

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, WriteFileInput)
        rel = confined(ctx.workspace, args.path)
        approved = ctx.approved_edit
        if approved is not None:
            existed = await _write_approved(ctx, rel, args.path, approved)
            if existed is None:
                return _with_note(f"Wrote {args.path} in the editor's buffer, which had unsaved "
                                  "changes; it is not saved to disk yet", approved)
            size = len(approved.new_text.encode())
            return _with_note(f"{'Updated' if existed else 'Created'} {args.path} ({size} "
                              "bytes)", approved)
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


class EditFileInput(Model):
    path: WritePath = Field(description="File path relative to the workspace root")
    old_text: str = Field(description="Exact text to replace (must occur exactly once unless "
                          "replace_all is true)")
    new_text: str = Field(description="Replacement text (must differ from old_text)")
    replace_all: bool = Field(False, description="Replace every occurrence of old_text")


class Edit(Model):
    old_text: str = Field(description="Exact text to replace (must occur exactly once, in the "
                          "file as the edits before this one left it, unless replace_all)")
    new_text: str = Field(description="Replacement text (must differ from old_text)")
    replace_all: bool = Field(False, description="Replace every occurrence of old_text")


class MultiEditInput(Model):
    path: WritePath = Field(description="File path relative to the workspace root")
    edits: list[Edit] = Field(min_length=1, max_length=100,
                              description="The edits, applied in order; all or none apply")


class EditFile(Tool):
    """Exact replacements in one text file: the diff shown for approval is the change made,
    through the editor's unsaved buffer when there is one, else the disk (one write)."""

    name = "edit_file"
    description = EDIT_FILE
    kind = "edit"
    writes = ("path",)  # (multi_edit too)
    Input: ClassVar[type[BaseModel]] = EditFileInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, EditFileInput)
        return f"Edit {args.path}"

    def transform(self, args: BaseModel, text: str) -> str:
        """The file's new text (a ToolError when an edit cannot apply)."""
        assert isinstance(args, EditFileInput)
        return _replace(text, args.old_text, args.new_text, args.path,
                        replace_all=args.replace_all)

    def done(self, args: BaseModel, old: str, new: str) -> str:
        """What the result says was changed."""
        assert isinstance(args, EditFileInput)
        if args.replace_all:
            n = old.count(args.old_text)
            return f"Edited {args.path} ({n} replacement{'s' if n != 1 else ''})"
        return f"Edited {args.path}"

    def _apply(self, args: BaseModel, ctx: ToolContext) -> tuple[str, str, str]:
        path = args.path  # type: ignore[attr-defined]
        rel = confined(ctx.workspace, path)
        old = _read_whole_text(ctx.workspace, rel, path)
        return rel, old, self.transform(args, old)

    def preview(self, args: BaseModel, ctx: ToolContext) -> DiffPreview | None:
        path: str = args.path  # type: ignore[attr-defined]
        rel = confined(ctx.workspace, path)
        unsaved = _unsaved(ctx, rel)
        if unsaved is not None:  # the edit as it will be made: in the buffer the user sees
            new = self.transform(args, unsaved)
            return DiffPreview(path=path, old_text=unsaved, new_text=new, unsaved_changes=True)
        _, old, new = self._apply(args, ctx)  # an edit that cannot apply is refused unasked
        return DiffPreview(path=path, old_text=old, new_text=new)

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        path: str = args.path  # type: ignore[attr-defined]
        rel = confined(ctx.workspace, path)
        approved = ctx.approved_edit
        if approved is not None:  # exactly the change shown, to the text shown
            existed = await _write_approved(ctx, rel, path, approved)
            done = f"Edited {path}" if approved.partial \
                else self.done(args, approved.old_text, approved.new_text)
            if existed is None:
                done += (" in the editor's buffer, which had unsaved changes; it is not "
                         "saved to disk yet")
            return _with_note(done, approved)
        unsaved = _unsaved(ctx, rel)
        if unsaved is not None:
            new = self.transform(args, unsaved)
            await _buffer_write(ctx, rel, path, unsaved, new)
            return ToolOutput(f"{self.done(args, unsaved, new)} in the editor's buffer, which "
                              "had unsaved changes; it is not saved to disk yet")
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
            raise ToolError(f"{path}: has unsaved changes in the editor; save or revert "
                            "them, then try again")
        if ctx.editor is None or not await _editor_write(ctx, rel, new):
            await _write(ctx.workspace, rel, new.encode("utf-8"))
        ctx.touched(rel)
        return ToolOutput(self.done(args, old, new))


class MultiEdit(EditFile):
    """Several exact edits of one file, all applied to its text before the one write (so
    either all apply or the file is unchanged), shown for approval as one combined diff."""

    name = "multi_edit"
    description = MULTI_EDIT
    Input = MultiEditInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, MultiEditInput)
        n = len(args.edits)
        return f"Edit {args.path} ({n} edit{'s' if n != 1 else ''})"

    def transform(self, args: BaseModel, text: str) -> str:
        assert isinstance(args, MultiEditInput)
        many = len(args.edits) > 1
        for i, edit in enumerate(args.edits, 1):
            text = _replace(text, edit.old_text, edit.new_text, args.path,
                            replace_all=edit.replace_all,
                            which=f"edit {i} of {len(args.edits)}: " if many else "")
        return text

    def done(self, args: BaseModel, old: str, new: str) -> str:
        assert isinstance(args, MultiEditInput)
        n = len(args.edits)
        return f"Edited {args.path} ({n} edit{'s' if n != 1 else ''} applied)"
