"""Prompt content blocks as the turn's text: typed text plus attached resources as context.

Text blocks are what the user typed; resource links (``@file`` mentions) and embedded resources
become attachments the model sees after the message; image blocks are stored by content and go
to the model as images (``context`` records, as the editors attach them). A linked file is
read only when it lies inside the workspace (through the editor when it offers
``fs/read_text_file``, so unsaved changes count); anything else is named, not read.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from openprogram_lsp.core.errors import InvalidParams, OpenProgramError
from openprogram_lsp.core.images import ImageError, decode_base64
from openprogram_lsp.core.types import ImagePart
from openprogram_lsp.tools.paths import resolve_in_workspace

MAX_ATTACHMENT_CHARS = 256 * 1024

Block = (TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock
         | EmbeddedResourceContentBlock)
ReadText = Callable[[Path], Awaitable[str]]
PutImage = Callable[[bytes, str], ImagePart]


@dataclass(slots=True)
class Prompt:
    """What the user sent: the typed text, the model's text, and the attachments' records."""

    typed: str
    text: str
    attachments: list[dict[str, Any]] = field(default_factory=list)
    unseen: list[str] = field(default_factory=list)  # audio the model never gets
    images: list[dict[str, Any]] = field(default_factory=list)  # context records of images


def file_path(uri: str) -> Path | None:
    """The local path of a ``file://`` URI (None for other schemes or undecodable ones)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    try:
        path = unquote(parsed.path, errors="strict")
    except UnicodeDecodeError:
        return None
    return Path(path) if path.startswith("/") and "\x00" not in path else None


def _in_workspace(workspace: Path, path: Path) -> Path | None:
    try:
        rel = os.path.relpath(path, workspace.resolve())
        return resolve_in_workspace(workspace, rel)
    except (OpenProgramError, ValueError):
        return None


def _cap(text: str) -> str:
    if len(text) <= MAX_ATTACHMENT_CHARS:
        return text
    return text[:MAX_ATTACHMENT_CHARS] + f"\n[... truncated at {MAX_ATTACHMENT_CHARS} characters]"


async def _linked(block: ResourceContentBlock, workspace: Path,
                  read: ReadText) -> tuple[str | None, str | None]:
    """The text of a linked resource, or a note saying why it was not read."""
    path = file_path(block.uri)
    if path is None:
        return None, "not a local file; not read"
    target = _in_workspace(workspace, path)
    if target is None:
        return None, "outside the workspace; not read"
    try:
        return _cap(await read(target)), None
    except Exception as exc:
        return None, f"could not be read: {exc}"


def _image(block: ImageContentBlock, n: int, put: PutImage) -> dict[str, Any]:
    """An image block checked from its bytes and stored; its ``context`` record."""
    uri = block.uri or f"image:{n + 1}"
    name = (Path(urlparse(block.uri).path).name if block.uri else "") or f"image-{n + 1}"
    try:
        part = put(decode_base64(block.data, f"prompt[{n}].data"), name)
    except ImageError as exc:
        msg = exc.message if exc.message.startswith("prompt[") else f"prompt[{n}]: {exc.message}"
        raise InvalidParams(msg) from None
    return {"kind": "image", "uri": uri, "path": name, **part.wire()}


async def build_prompt(blocks: Sequence[Block], workspace: Path, read: ReadText,
                       put_image: PutImage | None = None) -> Prompt:
    """Fold the prompt's blocks into the turn's text and attachment records (images through
    ``put_image``; without it they are named, not passed)."""
    typed: list[str] = []
    parts: list[str] = []
    records: list[dict[str, Any]] = []
    unseen: list[str] = []
    images: list[dict[str, Any]] = []
    for n, block in enumerate(blocks):
        if isinstance(block, TextContentBlock):
            typed.append(block.text)
            continue
        if isinstance(block, ImageContentBlock) and put_image is not None:
            # checked, maybe downscaled, and written: off the event loop
            images.append(await asyncio.to_thread(_image, block, n, put_image))
            continue
        if isinstance(block, ResourceContentBlock):
            uri, name = block.uri, block.name or block.uri
            text, note = await _linked(block, workspace, read)
        elif isinstance(block, EmbeddedResourceContentBlock):
            res = block.resource
            uri = res.uri
            name = Path(urlparse(uri).path).name or uri
            if isinstance(res, TextResourceContents):
                text, note = _cap(res.text), None
            else:
                assert isinstance(res, BlobResourceContents)
                text, note = None, "binary content; not shown"
        else:  # audio is not advertised; say so instead of dropping it
            what = _media(block)
            records.append({"uri": getattr(block, "uri", None) or "", "name": block.type,
                            "note": f"{what}: not passed to the model"})
            parts.append(f"[the user attached {what}, which this agent cannot pass to the "
                         "model; say so if it matters]")
            unseen.append(what)
            continue
        typed.append(f"@{name}")
        record: dict[str, Any] = {"uri": uri, "name": name}
        if note:
            record["note"] = note
            parts.append(f'<attachment uri="{uri}" name="{name}">({note})</attachment>')
        else:
            record["chars"] = len(text or "")
            parts.append(f'<attachment uri="{uri}" name="{name}">\n{text}\n</attachment>')
        records.append(record)
    message = "".join(typed)
    if not message.strip() and not parts:
        message = "(see the image)" if images else ""
    full = "\n\n".join([message.rstrip("\n"), *parts]) if parts else message
    return Prompt(typed=message, text=full, attachments=records, unseen=unseen, images=images)


def _media(block: ImageContentBlock | AudioContentBlock) -> str:
    """An image or audio block described: its kind, type and size (its data never read)."""
    size = len(block.data or "") * 3 // 4  # base64
    shown = f"{size // 1024} KB" if size >= 1024 else f"{size} bytes"
    return f"an {block.type} ({block.mime_type}, {shown})" if block.type == "image" \
        else f"{block.type} ({block.mime_type}, {shown})"
