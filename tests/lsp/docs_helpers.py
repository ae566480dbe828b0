"""A plain LSP client's open documents: didOpen/didChange, and workspace/applyEdit applied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.conftest import OpClient


def _offset(text: str, pos: types.Position) -> int:
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[:pos.line])
    line = lines[pos.line] if pos.line < len(lines) else ""
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character:
            return start + i
        units += len(ch.encode("utf-16-le")) // 2
    return start + len(line)


class Editor:
    """Buffers kept in step with the server, the way an editor does it."""

    def __init__(self, client: OpClient) -> None:
        self.client = client
        self.text: dict[str, str] = {}
        self.version: dict[str, int] = {}
        self.applied: list[Any] = []

    def open(self, path: Path, text: str | None = None) -> str:
        """``didOpen`` with the disk text (or ``text``)."""
        uri = path.as_uri()
        self.text[uri] = path.read_text("utf-8") if text is None else text
        self.version[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1,
                                                 text=self.text[uri])))
        return uri

    def edit(self, uri: str, start: tuple[int, int], end: tuple[int, int], new: str) -> None:
        """Type into the buffer: an incremental ``didChange``."""
        rng = types.Range(start=types.Position(*start), end=types.Position(*end))
        self._apply(uri, rng, new)
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri,
                                                                version=self.version[uri]),
            content_changes=[types.TextDocumentContentChangePartial(range=rng, text=new)]))

    def _apply(self, uri: str, rng: types.Range, new: str) -> None:
        text = self.text[uri]
        a, b = _offset(text, rng.start), _offset(text, rng.end)
        self.text[uri] = text[:a] + new + text[b:]
        self.version[uri] += 1

    def save(self, path: Path) -> None:
        """Write the buffer to disk and send ``didSave``."""
        uri = path.as_uri()
        path.write_text(self.text[uri], "utf-8")
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))

    def close(self, uri: str) -> None:
        """``didClose``: the editor drops the buffer (and whatever it held unsaved)."""
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        del self.text[uri]

    def handle_apply_edit(self, params: types.ApplyWorkspaceEditParams
                          ) -> types.ApplyWorkspaceEditResult:
        """``workspace/applyEdit``: apply each edit (version checked) and sync it back."""
        self.applied.append(params)
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            uri = change.text_document.uri
            if change.text_document.version not in (None, self.version.get(uri)):
                return types.ApplyWorkspaceEditResult(applied=False,
                                                      failure_reason="version mismatch")
            for e in change.edits:
                assert isinstance(e, types.TextEdit)
                self.edit(uri, (e.range.start.line, e.range.start.character),
                          (e.range.end.line, e.range.end.character), e.new_text)
        return types.ApplyWorkspaceEditResult(applied=True)


def with_editor(editors: list[Editor], permission: str | None = "allow_once") -> Any:
    """A ``setup`` for ``start``: an Editor on the client, and approvals answered."""

    def setup(client: OpClient) -> None:
        editor = Editor(client)
        editors.append(editor)

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def _apply_edit(params: types.ApplyWorkspaceEditParams
                        ) -> types.ApplyWorkspaceEditResult:
            return editor.handle_apply_edit(params)

        if permission is not None:
            @client.feature("openprogram/requestPermission")
            def _permission(params: Any) -> dict[str, Any]:
                client.permission_requests.append(params)
                return {"outcome": "selected", "optionId": permission}

    return setup
