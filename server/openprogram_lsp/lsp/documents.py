"""The editor's open documents (``textDocument/did*``, incremental) as the ``Buffers`` port.

pygls keeps each connection's open documents up to date. A document is *dirty* when its text
differs from the file on disk, checked when asked (so a save, a revert or an outside write is
seen without tracking ``didSave``). Agent reads of a dirty file get the buffer; agent writes to
one go into the buffer through ``workspace/applyEdit`` and are never saved for the user
(docs/decisions/unsaved-buffers.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

if TYPE_CHECKING:
    from openprogram_lsp.lsp.link import Link, Links

log = logging.getLogger(__name__)

MAX_COMPARE_BYTES = 16 * 1024 * 1024  # a larger file counts as dirty when it is open
APPLY_TIMEOUT = 30.0
SYNC_TIMEOUT = 5.0  # for the didChange that follows an applied edit


def doc_path(uri: str) -> str | None:
    """The absolute, resolved file path of a ``file:`` document uri (None for other schemes)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    if not path:
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def _disk_text(path: str) -> str | None:
    """The file's text, None when missing, unreadable, not UTF-8 or too large to compare."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_COMPARE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_COMPARE_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _offset_position(text: str, offset: int) -> types.Position:
    """An LSP position (UTF-16 code units) of a character offset into ``text``."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    chunk = text[start:offset]
    return types.Position(line=line, character=len(chunk.encode("utf-16-le")) // 2)


def minimal_edit(old: str, new: str) -> types.TextEdit:
    """One TextEdit turning ``old`` into ``new`` that spans only the changed middle."""
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return types.TextEdit(
        range=types.Range(start=_offset_position(old, head),
                          end=_offset_position(old, len(old) - tail)),
        new_text=new[head:len(new) - tail])


class DocumentBuffers:
    """Open documents of every connection of a host (the turn's own editor first)."""

    def __init__(self, host: Links) -> None:
        self.host = host

    def _connections(self, session_id: str) -> list[Link]:
        owner = self.host.owner_for(session_id)
        rest = [c for c in self.host.connections if c is not owner]
        return [owner, *rest] if owner is not None else rest

    def find(self, session_id: str, path: Path) -> tuple[Link, TextDocument] | None:
        """The connection and document that have ``path`` open (the session's editor first)."""
        target = os.path.realpath(path)
        for conn in self._connections(session_id):
            for uri, doc in list(conn.workspace.text_documents.items()):
                if doc_path(uri) == target:
                    return conn, doc
        return None

    def open_text(self, path: Path) -> str | None:
        """The buffer text of ``path`` in any connection, dirty or not (None: not open)."""
        found = self.find("", path)
        return found[1].source if found is not None else None

    def unsaved(self, session_id: str, path: Path) -> str | None:
        """The buffer's text when it differs from the disk."""
        found = self.find(session_id, path)
        if found is None:
            return None
        text = found[1].source
        return None if _disk_text(os.path.realpath(path)) == text else text

    def unsaved_under(self, session_id: str, root: Path) -> dict[Path, str]:
        """The dirty buffers of files at or below ``root`` (the session's editor first)."""
        base = os.path.realpath(root)
        inside = base.rstrip(os.sep) + os.sep
        out: dict[Path, str] = {}
        seen: set[str] = set()  # as find() does: the first editor that has it open decides
        for conn in self._connections(session_id):
            for uri, doc in list(conn.workspace.text_documents.items()):
                path = doc_path(uri)
                if path is None or path in seen or (path != base
                                                    and not path.startswith(inside)):
                    continue
                seen.add(path)
                if _disk_text(path) != doc.source:
                    out[Path(path)] = doc.source
        return out

    async def apply(self, session_id: str, path: Path, old_text: str, new_text: str) -> str:
        """Change the buffer from ``old_text`` to ``new_text`` with ``workspace/applyEdit``."""
        found = self.find(session_id, path)
        if found is None:
            return "the editor closed it"
        conn, doc = found
        if not conn.settings.client.apply_edit:
            return "the editor cannot take edits from the server (no workspace/applyEdit)"
        if doc.source != old_text:
            return "the buffer changed since the edit was made"
        edit = types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=doc.uri, version=doc.version),
            edits=[minimal_edit(old_text, new_text)])])
        try:
            result = await asyncio.wait_for(conn.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=edit, label="OpenProgram")), APPLY_TIMEOUT)
        except TimeoutError:
            return "the editor did not apply the edit in time"
        except Exception as exc:  # an error response
            log.info("applyEdit refused: %s", exc)
            return f"the editor refused the edit ({exc})"
        if not result.applied:
            return f"the editor refused the edit ({result.failure_reason or 'no reason given'})"
        await self._synced(conn, doc.uri, new_text)
        return ""

    @staticmethod
    async def _synced(conn: Link, uri: str, text: str) -> None:
        """Wait (bounded) for the editor's ``didChange`` of an applied edit: editors may send
        it after answering (Neovim debounces it), and what reads the buffer next (the turn's
        checkpoint) must see the edit."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SYNC_TIMEOUT
        while loop.time() < deadline:
            doc = conn.workspace.text_documents.get(uri)
            if doc is None or doc.source == text:
                return
            await asyncio.sleep(0.01)
        log.info("no didChange for the applied edit of %s within %ss", uri, SYNC_TIMEOUT)


class RestoreBuffers:
    """The open documents of a workspace as a restore's ``BufferSink``: called from the
    restore's worker thread, edits go through ``workspace/applyEdit`` on the server's loop."""

    def __init__(self, buffers: DocumentBuffers, workspace: Path,
                 loop: asyncio.AbstractEventLoop) -> None:
        self.buffers = buffers
        self.workspace = workspace.resolve()
        self.loop = loop

    def unsaved(self, rel: str) -> str | None:
        return self.buffers.unsaved("", self.workspace / rel)

    def apply(self, rel: str, old: str, new: str) -> str:
        future = asyncio.run_coroutine_threadsafe(
            self.buffers.apply("", self.workspace / rel, old, new), self.loop)
        try:
            return future.result(APPLY_TIMEOUT + 5.0)
        except TimeoutError:
            future.cancel()
            return "the editor did not apply the edit in time"
