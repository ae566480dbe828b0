"""Reference scan: which tool results does later text refer to (so compaction keeps them)?

A cheap scan, no model involved. A tool result counts as referenced when text written after
its node (user and assistant text, tool-call arguments; not other tool outputs) mentions a path
the call used or its base name, an identifier the output defines, or quotes one of its lines.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.types import Node, ToolCallRecord

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


def _later_text(node: Node) -> Iterable[str]:
    if node.role == "assistant":
        yield from (node.metadata.get("steps") or [node.text])
        for c in node.tool_calls or []:
            yield json.dumps(c.input, ensure_ascii=False)
    else:
        yield node.text


@dataclass(frozen=True, slots=True)
class NodeTerms:
    """What one node says (words, long lines) and what each of its tool results could be
    referred to by (paths and defined identifiers; distinctive output lines)."""

    words: frozenset[str]
    lines: frozenset[str]
    calls: tuple[tuple[str, frozenset[str], frozenset[str]], ...]


def node_terms(node: Node) -> NodeTerms:
    """Extract a node's terms (pure; cached by ``TermCache``)."""
    words: set[str] = set()
    lines: set[str] = set()
    for text in _later_text(node):
        if text:
            _words(text, words)
            _lines(text, lines)
    calls = []
    for call in node.tool_calls or []:
        output = call.output or ""
        keys = frozenset([*_paths(call), *_DEFINED.findall(output)[:MAX_IDENTIFIERS]])
        out_lines = frozenset(ln for ln in (x.strip() for x in
                                            output.splitlines()[:MAX_LINES])
                              if len(ln) >= MIN_LINE)
        calls.append((call.id, keys, out_lines))
    return NodeTerms(frozenset(words), frozenset(lines), tuple(calls))


class TermCache:
    """Node terms by node id, reused while the node object is the same (LRU, capped)."""

    def __init__(self, capacity: int = 50_000) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, tuple[Node, NodeTerms]] = OrderedDict()
        self._lock = threading.Lock()

    def terms(self, node: Node) -> NodeTerms:
        """The node's terms, from the cache when still valid."""
        hit = self._items.get(node.id)
        if hit is not None and hit[0] is node:
            with contextlib.suppress(KeyError):
                self._items.move_to_end(node.id)
            return hit[1]
        terms = node_terms(node)
        with self._lock:
            self._items[node.id] = (node, terms)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return terms


def scan_references(segments: list[Segment], cache: TermCache | None = None) -> set[str]:
    """Keys (see ``result_key``) of tool results that text in later nodes refers to."""
    get = cache.terms if cache is not None else node_terms
    words: set[str] = set()
    lines: set[str] = set()
    out: set[str] = set()
    for seg in reversed(segments):
        t = get(seg.node)
        for call_id, keys, out_lines in t.calls:
            if not words.isdisjoint(keys) or (lines and not lines.isdisjoint(out_lines)):
                out.add(result_key(seg.node_id, call_id))
        words |= t.words
        lines |= t.lines
    return out


def protected_nodes(keys: Iterable[str]) -> set[str]:
    """The node ids holding referenced tool results."""
    return {k.split(":", 1)[0] for k in keys}


class RefScan:
    """``scan_references`` carried along a list of segments that grows at its end: an index
    from each term to the results not yet referenced that it would reference, so adding a
    segment costs its own terms, not a pass over the earlier ones. The last segment added
    can be taken back (a turn's last segment is sometimes rendered again on the next).

    ``referenced`` is what ``scan_references`` gives for the segments added so far;
    ``changed`` collects the keys whose state changed (the caller empties it)."""

    def __init__(self, cache: TermCache | None = None) -> None:
        self._get = cache.terms if cache is not None else node_terms
        self._by_word: dict[str, list[str]] = {}
        self._by_line: dict[str, list[str]] = {}
        self.referenced: set[str] = set()
        self.changed: set[str] = set()
        # how to take the last segment back: terms popped, terms appended to, keys marked
        self._undo: tuple[list[tuple[dict[str, list[str]], str, list[str]]],
                          list[tuple[dict[str, list[str]], str]], list[str]] | None = None

    def add(self, seg: Segment, *, last: bool) -> None:
        """Add one segment after those added (``last``: keep what taking it back needs)."""
        t = self._get(seg.node)
        popped: list[tuple[dict[str, list[str]], str, list[str]]] = []
        pushed: list[tuple[dict[str, list[str]], str]] = []
        marked: list[str] = []
        referenced, changed = self.referenced, self.changed
        for index, terms in ((self._by_word, t.words), (self._by_line, t.lines)):
            if not index:
                continue
            for term in terms:
                keys = index.pop(term, None)
                if keys is None:
                    continue
                if last:
                    popped.append((index, term, keys))
                for k in keys:
                    if k not in referenced:
                        referenced.add(k)
                        changed.add(k)
                        marked.append(k)
        for call_id, keys_of, out_lines in t.calls:
            key = result_key(seg.node_id, call_id)
            for index, terms in ((self._by_word, keys_of), (self._by_line, out_lines)):
                for term in terms:
                    index.setdefault(term, []).append(key)
                    if last:
                        pushed.append((index, term))
        self._undo = (popped, pushed, marked) if last else None

    def take_back(self) -> bool:
        """Undo the last ``add`` (False when it cannot: the caller starts again)."""
        undo, self._undo = self._undo, None
        if undo is None:
            return False
        popped, pushed, marked = undo
        for index, term in reversed(pushed):
            keys = index[term]
            keys.pop()
            if not keys:
                del index[term]
        for index, term, keys in popped:
            index[term] = keys
        for k in marked:
            self.referenced.discard(k)
            self.changed.add(k)
        return True
