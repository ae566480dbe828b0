"""An MCP tool result as the model and the session store get it: text, attachments, capped."""

from __future__ import annotations

import json
from typing import Any

from openprogram_lsp.core.images import ImageBlobs, ImageError, decode_base64
from openprogram_lsp.core.types import ImagePart
from openprogram_lsp.tools.base import ToolOutput
from openprogram_lsp.tools.builtin.command import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES
from openprogram_lsp.tools.mcp.catalog import CallResult
from openprogram_lsp.tools.output import cap_text

MAX_ATTACHMENT_CHARS = 2 * 1024 * 1024
"""Largest base64 payload (image, audio, blob) kept with a tool result."""


def _size(data: str) -> str:
    n = len(data) * 3 // 4
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"


def _binary(kind: str, block: dict[str, Any], attachments: list[dict[str, Any]]) -> str:
    data = block.get("data") or block.get("blob") or ""
    mime = block.get("mimeType") or "application/octet-stream"
    if not isinstance(data, str) or len(data) > MAX_ATTACHMENT_CHARS:
        return f"[{kind}: {mime}, too large to keep ({_size(str(data))})]"
    attachments.append({"type": kind, "mimeType": mime, "data": data,
                        **({"uri": block["uri"]} if "uri" in block else {})})
    return f"[{kind} {len(attachments)}: {mime}, {_size(data)}, attached to this result]"


def _image(block: dict[str, Any], images: ImageBlobs, shown: list[ImagePart]) -> str | None:
    """An image block stored by content and passed on as an image (None: not a usable image,
    kept as an attachment instead)."""
    data = block.get("data")
    if not isinstance(data, str):
        return None
    try:
        part = images.put(decode_base64(data, "data"), f"image-{len(shown) + 1}")
    except ImageError:
        return None
    shown.append(part)
    small = f", downscaled from {part.original.width}x{part.original.height}" \
        if part.original is not None else ""
    return (f"[image {len(shown)}: {part.media_type}, {part.width}x{part.height}, "
            f"{part.size:,} bytes{small}, attached as an image]")


def _block_text(block: dict[str, Any], attachments: list[dict[str, Any]],
                images: ImageBlobs | None = None, shown: list[ImagePart] | None = None) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "image" and images is not None and shown is not None:
        text = _image(block, images, shown)
        if text is not None:
            return text
    if kind in ("image", "audio"):
        return _binary(str(kind), block, attachments)
    if kind == "resource_link":
        keys = ("uri", "name", "mimeType", "description")
        link: dict[str, Any] = {k: block[k] for k in keys if k in block}
        attachments.append({"type": "resource_link", **link})
        return f"[resource link: {block.get('name') or ''} <{block.get('uri', '')}>]"
    if kind == "resource":
        res = block.get("resource") or {}
        uri = res.get("uri", "")
        if isinstance(res.get("text"), str):
            return f"[resource <{uri}>]\n{res['text']}"
        return _binary("resource", {**res, "uri": uri}, attachments)
    return f"[{kind or 'unknown'} content]"


def to_output(result: CallResult, *, server: str, tool: str,
              images: ImageBlobs | None = None) -> ToolOutput:
    """Text for the model (capped like run_command output); images (PNG, JPEG, GIF, WebP)
    stored by content and passed on as images, other media and links as attachments."""
    attachments: list[dict[str, Any]] = []
    shown: list[ImagePart] = []
    parts = [_block_text(b, attachments, images, shown) for b in result.blocks]
    text = "\n".join(p for p in parts if p)
    if not text and result.structured is not None:
        text = json.dumps(result.structured, ensure_ascii=False, default=str)
    if not text:
        text = "(no output)"
    if result.is_error:
        text = f"MCP tool {server}/{tool} reported an error:\n{text}"
    data: dict[str, Any] = {"mcp": {"server": server, "tool": tool}}
    if attachments:
        data["attachments"] = attachments
    if shown:
        data["images"] = shown
    return ToolOutput(cap_text(text, max_bytes=MAX_OUTPUT_BYTES, max_lines=MAX_OUTPUT_LINES),
                      is_error=result.is_error, data=data)
