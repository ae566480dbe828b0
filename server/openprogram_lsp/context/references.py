"""Reference scan: which tool results does later text refer to (so compaction keeps them)?

A cheap scan, no model involved. A tool result counts as referenced when text written after
its node (user and assistant text, tool-call arguments; not other tool outputs) mentions a path
the call used or its base name, an identifier the output defines, or quotes one of its lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.types import ToolCallRecord

_WORD = re.compile(r"[A-Za-z0-9_][\w.\-/]*")
_DEFINED = re.compile(
    r"\b(?:def|class|function|func|fn|struct|interface|type|enum|trait|const|let|var|module)"
    r"\s+([A-Za-z_]\w{3,})")
MIN_LINE = 24
MAX_LINES = 400
MAX_IDENTIFIERS = 40


def result_key(node_id: str, call_id: str) -> str:
    """The key naming one tool result: its assistant node and tool call ids."""
    return f"{node_id}:{call_id}"


def _words(text: str, into: set[str]) -> None:
    for w in _WORD.findall(text):
        w = w.rstrip(".-/")
        if len(w) < 3:
            continue
        into.add(w)
        if "/" in w:
            into.add(w.rsplit("/", 1)[-1])


def _lines(text: str, into: set[str]) -> None:
    for ln in text.splitlines():
        ln = ln.strip().lstrip(">").strip().strip("`").strip()
        if len(ln) >= MIN_LINE:
            into.add(ln)


def _paths(call: ToolCallRecord) -> list[str]:
    out = []
    for value in call.input.values():
        values = value if isinstance(value, list) else [value]
        for v in values:
            if isinstance(v, str) and 2 < len(v) < 256 and not any(ch.isspace() for ch in v) \
                    and ("/" in v or "." in v):
                v = v.rstrip("/")
                out.append(v)
                if "/" in v:
                    out.append(v.rsplit("/", 1)[-1])
    return out


def _referenced(call: ToolCallRecord, words: set[str], lines: set[str]) -> bool:
    if any(p in words for p in _paths(call)):
        return True
    output = call.output or ""
    idents = _DEFINED.findall(output)[:MAX_IDENTIFIERS]
    if any(i in words for i in idents):
        return True
    if lines:
        for i, ln in enumerate(output.splitlines()):
            if i >= MAX_LINES:
                break
            ln = ln.strip()
            if len(ln) >= MIN_LINE and ln in lines:
                return True
    return False


def _later_text(seg: Segment) -> Iterable[str]:
    node = seg.node
    if node.role == "assistant":
        yield from (node.metadata.get("steps") or [node.text])
        for c in node.tool_calls or []:
            yield json.dumps(c.input, ensure_ascii=False)
    else:
        yield node.text


def scan_references(segments: list[Segment]) -> set[str]:
    """Keys (see ``result_key``) of tool results that text in later nodes refers to."""
    words: set[str] = set()
    lines: set[str] = set()
    out: set[str] = set()
    for seg in reversed(segments):
        for call in seg.node.tool_calls or []:
            if _referenced(call, words, lines):
                out.add(result_key(seg.node_id, call.id))
        for text in _later_text(seg):
            if text:
                _words(text, words)
                _lines(text, lines)
    return out


def protected_nodes(keys: Iterable[str]) -> set[str]:
    """The node ids holding referenced tool results."""
    return {k.split(":", 1)[0] for k in keys}
