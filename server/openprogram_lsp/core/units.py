"""Parsing user-given sizes shared by several layers."""

from __future__ import annotations


def parse_window(raw: str) -> int | None:
    """A token count like ``32768``, ``32k`` or ``1m`` (at least 1024), else None."""
    text = raw.strip().lower().replace("_", "")
    scale = 1
    if text.endswith("k"):
        text, scale = text[:-1], 1_000
    elif text.endswith("m"):
        text, scale = text[:-1], 1_000_000
    try:
        value = int(float(text) * scale)
    except ValueError:
        return None
    return value if value >= 1024 else None
