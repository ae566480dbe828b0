"""The ``context`` of chat and fork: each attachment resolved to the text the model will see.

A file or selection without ``text`` is read by the server: the open buffer when the editor
has one (unsaved edits included), else the file, which must then lie in a workspace folder
(read through the race-proof walk). What is stored on the user node is exactly what the model
is shown, so history can say "what the model saw".
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.core import fdfs
from openprogram_lsp.core.errors import InvalidParams, OpenProgramError
from openprogram_lsp.core.images import MAX_IMAGE_BYTES, ImageError, decode_base64
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.documents import doc_path
from openprogram_lsp.tools.paths import confined

if TYPE_CHECKING:
    from openprogram_lsp.lsp.view import ConnectionView

MAX_TOTAL = 2 * 1024 * 1024  # characters over every attachment of one message


def offset_of(text: str, line: int, character: int) -> int:
    """The character offset of an LSP position (UTF-16 ``character``), clamped to the text."""
    pos = 0
    for _ in range(line):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    units = 0
    i = pos
    while i < end and units < character:
        units += 2 if ord(text[i]) > 0xFFFF else 1
        i += 1
    return i


def slice_range(text: str, rng: w.WireRange) -> str:
    """The text inside an LSP range."""
    a = offset_of(text, rng.start.line, rng.start.character)
    b = offset_of(text, rng.end.line, rng.end.character)
    return text[a:max(a, b)]


def _within(folders: list[Path], path: str) -> tuple[Path, str] | None:
    for root in folders:
        base = os.path.realpath(root)
        if path == base or path.startswith(base + os.sep):
            return root, os.path.relpath(path, base)
    return None


def _read(root: Path, rel: str, field: str) -> tuple[str, bool]:
    try:
        rel = confined(root, rel)
        data, size = fdfs.read_bytes(root, rel, w.MAX_ATTACHMENT_TEXT)
    except OpenProgramError as exc:
        raise InvalidParams(f"{field}: {exc.message}") from None
    if b"\x00" in data[:8192]:
        raise InvalidParams(f"{field}: a binary file cannot be attached")
    return data.decode("utf-8", "replace"), size > w.MAX_ATTACHMENT_TEXT


def _read_image(root: Path, rel: str, field: str) -> bytes:
    try:
        rel = confined(root, rel)
        data, size = fdfs.read_bytes(root, rel, MAX_IMAGE_BYTES + 1)
    except OpenProgramError as exc:
        raise InvalidParams(f"{field}: {exc.message}") from None
    if size > MAX_IMAGE_BYTES:
        raise InvalidParams(f"{field}: the image is {size:,} bytes; the limit is "
                            f"{MAX_IMAGE_BYTES // (1024 * 1024)} MB")
    return data


async def _image(server: ConnectionView, item: w.ContextItem, entry: dict[str, Any],
                 inside: tuple[Path, str] | None, field: str) -> dict[str, Any]:
    """An image attachment stored by content; its record on the node (no bytes)."""
    if item.data is not None:
        try:
            data = decode_base64(item.data, field + ".data")
        except ImageError as exc:
            raise InvalidParams(exc.message) from None
    elif inside is None:
        raise InvalidParams(f"{field}.uri: an image outside the workspace must be sent as data")
    else:
        data = await asyncio.to_thread(_read_image, inside[0], inside[1], field + ".uri")
    name = item.name or str(entry["path"]).rsplit("/", 1)[-1] or "image"
    store = server.host.dispatcher.services.store
    try:
        part = await asyncio.to_thread(store.images.put, data, name)
    except ImageError as exc:
        raise InvalidParams(f"{field}: {exc.message}") from None
    entry.pop("name", None)
    return {**entry, **part.wire()}


async def resolve(server: ConnectionView, items: list[w.ContextItem] | None
                  ) -> list[dict[str, Any]]:
    """The attachments as stored on the user node (kind, uri, path, range?, text, ...)."""
    out: list[dict[str, Any]] = []
    total = 0
    folders = server.folders or [server.primary_workspace]
    for i, item in enumerate(items or []):
        field = f"context[{i}]"
        path = doc_path(item.uri)
        inside = _within(folders, path) if path else None
        entry: dict[str, Any] = {"kind": item.kind, "uri": item.uri,
                                 "path": inside[1].replace(os.sep, "/") if inside else
                                 (path or item.uri)}
        if item.kind == "image":
            out.append(await _image(server, item, entry, inside, field))
            continue
        if item.range is not None:
            entry["range"] = item.range.model_dump()
        if item.name:
            entry["name"] = item.name
        if item.diagnostics:
            entry["diagnostics"] = [d.model_dump(exclude_none=True) for d in item.diagnostics]
        text = item.text
        if text is None and item.kind == "diagnostics" and not item.diagnostics:
            raise InvalidParams(f"{field}: a diagnostics attachment needs diagnostics or text")
        if text is None and item.kind == "references":
            raise InvalidParams(f"{field}.text: a references attachment needs the list as text")
        if text is None and item.kind != "diagnostics":
            if path is None:
                raise InvalidParams(f"{field}.uri: only file: uris can be read; send text")
            buffered = server.host.buffers.open_text(Path(path))
            if buffered is not None:
                whole = buffered
                entry["unsaved"] = server.host.buffers.unsaved("", Path(path)) is not None
            elif inside is None:
                raise InvalidParams(f"{field}.uri: outside the workspace; send its text")
            else:
                whole, cut = await asyncio.to_thread(_read, inside[0], inside[1], field + ".uri")
                if cut:
                    entry["truncated"] = True
            text = slice_range(whole, item.range) if item.range is not None \
                and item.kind != "file" else whole
        if text is not None:
            entry["text"] = text
            total += len(text)
        if total > MAX_TOTAL:
            raise InvalidParams(f"{field}: the attachments exceed {MAX_TOTAL} characters")
        if not entry.get("unsaved"):
            entry.pop("unsaved", None)
        out.append(entry)
    return out
