"""Editor attachments (file, selection, diagnostics, symbol) rendered into the user message.

The format is stable and documented in docs/protocol.md: one ``<context>`` block before the
user's text, one element per attachment, attributes escaped, the text verbatim::

    <context>
    <selection path="src/app.py" lines="3-5">
    ...text...
    </selection>
    <diagnostics path="src/app.py" lines="3-5">
    src/app.py:4:7: error: name 'x' is not defined [pyflakes]
    </diagnostics>
    </context>

    the user's message
"""

from __future__ import annotations

from typing import Any

from openprogram_lsp.core.images import downscaled_note
from openprogram_lsp.core.types import ImagePart

SEVERITIES = {1: "error", 2: "warning", 3: "info", 4: "hint"}


def _attr(value: str) -> str:
    return (value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;").replace("\n", " "))


def _lines(item: dict[str, Any]) -> str | None:
    rng = item.get("range")
    if not isinstance(rng, dict):
        return None
    first = int(rng["start"]["line"]) + 1
    last = int(rng["end"]["line"]) + 1
    if rng["end"]["character"] == 0 and last > first:
        last -= 1  # a selection of whole lines ends at column 0 of the next one
    return f"{first}" if first == last else f"{first}-{last}"


def diagnostic_line(path: str, diag: dict[str, Any]) -> str:
    """``path:line:col: severity: message [source code]`` (1-based, like compilers print)."""
    start = diag.get("range", {}).get("start", {})
    where = f"{path}:{int(start.get('line', 0)) + 1}:{int(start.get('character', 0)) + 1}"
    severity = SEVERITIES.get(int(diag.get("severity") or 1), "error")
    origin = " ".join(str(x) for x in (diag.get("source"), diag.get("code")) if x)
    tail = f" [{origin}]" if origin else ""
    message = str(diag.get("message", "")).replace("\n", " ")
    return f"{where}: {severity}: {message}{tail}"


IMAGE_FIELDS = ("sha256", "mediaType", "width", "height", "size", "name")


def image_parts(items: Any) -> list[dict[str, Any]]:
    """The image records among a user node's attachments, in order (ImagePart fields)."""
    if not isinstance(items, list):
        return []
    return [{k: i[k] for k in IMAGE_FIELDS if k in i} for i in items
            if isinstance(i, dict) and i.get("kind") == "image" and i.get("sha256")]


def downscaled_notes(items: Any) -> list[str]:
    """What the user is told of each image attachment that was downscaled on the way in."""
    if not isinstance(items, list):
        return []
    parts = [ImagePart.model_validate(i) for i in items if isinstance(i, dict)
             and i.get("kind") == "image" and isinstance(i.get("original"), dict)]
    return [n for n in map(downscaled_note, parts) if n]


def render_item(item: dict[str, Any]) -> str:
    """One attachment as an element (an image: a self-closing element; its pixels go with
    the message as an image part)."""
    kind = str(item.get("kind", "file"))
    path = str(item.get("path") or item.get("uri") or "")
    attrs = [f'path="{_attr(path)}"']
    if kind == "image":
        attrs += [f'type="{_attr(str(item.get("mediaType", "")))}"',
                  f'pixels="{int(item.get("width") or 0)}x{int(item.get("height") or 0)}"']
        return f"<image {' '.join(attrs)}/>"
    lines = _lines(item)
    if lines and kind != "file":
        attrs.append(f'lines="{lines}"')
    if item.get("name"):
        attrs.append(f'name="{_attr(str(item["name"]))}"')
    if item.get("unsaved"):
        attrs.append('unsaved="true"')
    if item.get("truncated"):
        attrs.append('truncated="true"')
    body = str(item.get("text") or "")
    diags = item.get("diagnostics") or []
    if kind == "diagnostics" and diags:
        body = "\n".join(diagnostic_line(path, d) for d in diags)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"<{kind} {' '.join(attrs)}>\n{body}</{kind}>"


def render_context(items: list[dict[str, Any]]) -> str:
    """The ``<context>`` block for a user message ("" when there is nothing attached)."""
    if not items:
        return ""
    return "<context>\n" + "\n".join(render_item(i) for i in items) + "\n</context>"


def with_context(text: str, items: Any) -> str:
    """The user's text as the model sees it: the attachments first, then the message."""
    if not isinstance(items, list) or not items:
        return text
    return f"{render_context([i for i in items if isinstance(i, dict)])}\n\n{text}"
