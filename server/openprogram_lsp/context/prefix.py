"""The rendered chain of each session, kept between turns and extended by the new nodes.

A turn's chain is the previous turn's chain plus a few nodes (the last reply, the new message),
so everything derived per node (segments, the flat message list, token sums, kept ids and their
ranges, idle-gap points, the messages digest) is carried over and only the new part is worked
out. The carried part is checked, never trusted: the chain must run through the node the state
ended at (ids cannot change meaning: predecessors are immutable), the summary and the start
must be the same, and every carried node must be the very body object the chain holds now (a
rewritten node, e.g. an edit of history, a finalized reply or a reloaded session, is a new
object); from the first node that differs on, the state is worked out again. The result equals a
from-scratch rendering (``tests/context/test_incremental_sessions.py``).
"""

from __future__ import annotations

import bisect
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from operator import is_
from typing import Any

from openprogram_lsp.context.commit import digest_update
from openprogram_lsp.context.microcompact import scan_gaps
from openprogram_lsp.context.render import RenderCache, render_counted
from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.chain import NodeChain
from openprogram_lsp.core.ranges import Ranges
from openprogram_lsp.core.types import Message, Node


@dataclass(slots=True, repr=False)
class Rendered:
    """One chain's rendering and what is derived from it, per segment where it can be cut."""

    start: int
    summary: Node | None
    threshold: float
    nodes: list[Node] = field(default_factory=list)  # chain[start:end], rendered or skipped
    seg_end: list[int] = field(default_factory=list)  # per node: segments after it
    turn_after: list[int] = field(default_factory=list)  # per node: turn counter after it
    segments: list[Segment] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)  # per segment: chain position (-1)
    msg_end: list[int] = field(default_factory=list)  # per segment: messages after it
    tok_end: list[int] = field(default_factory=list)  # per segment: tokens after it
    messages: list[Message] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    ranges: Ranges = field(default_factory=list)
    gaps: list[int] = field(default_factory=list)  # scan_gaps over all segments
    gap_prev: Node | None = None
    hasher: Any = None  # SHA-256 over every message
    hasher_before_last: Any = None  # ... over all but the last segment's

    @property
    def tokens(self) -> int:
        """Estimated tokens of all segments."""
        return self.tok_end[-1] if self.tok_end else 0

    @property
    def digest(self) -> str:
        """``messages_digest`` of ``messages``."""
        return str(self.hasher.hexdigest())

    def copy_to(self, nodes: int) -> Rendered:
        """A new state holding this one's first ``nodes`` nodes (this one is never changed:
        earlier preps still hold its lists)."""
        cut = self.seg_end[nodes - 1] if nodes else (1 if self.summary is not None else 0)
        out = Rendered(self.start, self.summary, self.threshold, self.nodes[:nodes],
                       self.seg_end[:nodes], self.turn_after[:nodes], self.segments[:cut],
                       self.positions[:cut], self.msg_end[:cut], self.tok_end[:cut])
        out.messages = self.messages[:out.msg_end[-1]] if cut else []
        out.kept = self.kept[:cut]
        out.ranges = _cut_ranges(self.ranges, self.positions[cut - 1] if cut else -1,
                                 summary=self.summary is not None and cut > 0)
        out.gaps = self.gaps[:bisect.bisect_left(self.gaps, cut)]
        out.gap_prev = next((s.node for s in reversed(out.segments)
                             if s.node.role in ("user", "assistant")), None)
        n = len(self.segments)
        if cut == n:
            out.hasher, out.hasher_before_last = self.hasher.copy(), \
                self.hasher_before_last.copy() if self.hasher_before_last else None
        elif cut == n - 1 and self.hasher_before_last is not None:
            out.hasher = self.hasher_before_last.copy()
        else:
            out.hasher = hashlib.sha256()
            digest_update(out.hasher, out.messages[:out.msg_end[-2]] if cut > 1 else [])
            out.hasher_before_last = out.hasher.copy() if cut else None
            digest_update(out.hasher, out.messages[out.msg_end[-2] if cut > 1 else 0:])
        return out

    def add(self, seg: Segment, position: int) -> None:
        """Append one segment."""
        self.hasher_before_last = self.hasher.copy()
        digest_update(self.hasher, seg.messages)
        self.segments.append(seg)
        self.positions.append(position)
        self.messages.extend(seg.messages)
        self.msg_end.append(len(self.messages))
        self.tok_end.append(self.tokens + seg.tokens)
        self.kept.append(seg.node.id)
        if position < 0:
            self.ranges.append(seg.node.id)
        elif self.ranges and isinstance(self.ranges[-1], list) \
                and self.ranges[-1][1] + 1 == position:
            self.ranges[-1] = [self.ranges[-1][0], position]
        else:
            self.ranges.append([position, position])


def _cut_ranges(ranges: Ranges, last: int, *, summary: bool) -> Ranges:
    """The ranges of positions up to ``last`` (the summary's id kept when it is)."""
    out: Ranges = []
    for item in ranges:
        if isinstance(item, str):
            if summary:
                out.append(item)
        elif item[0] <= last:
            out.append([item[0], min(item[1], last)])
    return out


class PrefixCache:
    """The last rendering of each session (``capacity`` sessions, least recent dropped)."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, Rendered] = OrderedDict()
        self._lock = threading.Lock()
        self.reused = 0  # nodes carried over so far (tests)

    def render(self, sid: str, chain: NodeChain, summary: Node | None, start: int,
               cache: RenderCache, threshold: float) -> Rendered:
        """The rendering of ``chain[start:]`` after ``summary``, reusing the session's last."""
        nodes = chain[start:]
        with self._lock:
            old = self._items.get(sid)
        keep = 0
        if old is not None and old.start == start and old.summary is summary \
                and old.threshold == threshold and old.nodes \
                and len(old.nodes) <= len(nodes) \
                and chain.id_at(start + len(old.nodes) - 1) == old.nodes[-1].id:
            k = len(old.nodes)
            if all(map(is_, nodes[:k - 1], old.nodes[:k - 1])):
                keep = k if nodes[k - 1] is old.nodes[k - 1] else k - 1
            else:
                keep = next(i for i in range(k) if nodes[i] is not old.nodes[i])
        if keep and old is not None:
            state = old.copy_to(keep)
            self.reused += keep
        else:
            state = Rendered(start, summary, threshold, hasher=hashlib.sha256())
            if summary is not None:
                msgs, tokens = cache.render(summary)
                state.add(Segment(summary, msgs, tokens, -1), -1)
        begin = len(state.segments)
        _extend(state, nodes, keep, cache)
        state.gap_prev = scan_gaps(state.segments, begin, state.gap_prev, threshold, state.gaps)
        with self._lock:
            self._items[sid] = state
            self._items.move_to_end(sid)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return state


def _extend(state: Rendered, nodes: list[Node], begin: int, cache: RenderCache) -> None:
    """Render ``nodes[begin:]`` onto the state (what ``render._segments`` does per node)."""
    added: list[Segment] = []
    used: list[str] = []
    cached = cache._items.get
    turn = state.turn_after[begin - 1] if begin else -1
    base = state.start
    for i in range(begin, len(nodes)):
        node = nodes[i]
        meta = node.metadata
        skip = bool(meta) and meta.get("command") == "compact"
        if not skip and (node.role == "user" or turn < 0):
            turn += 1
        if not skip:
            seg = cached(node.id)
            if seg is not None and seg.node is node:
                if seg.turn == turn:
                    used.append(node.id)
                else:
                    seg = Segment(node, seg.messages, seg.tokens, turn)
                    added.append(seg)
            else:
                msgs, tokens = render_counted(node)
                seg = Segment(node, msgs, tokens, turn)
                added.append(seg)
            if seg.messages:
                state.add(seg, base + i)
        state.nodes.append(node)
        state.seg_end.append(len(state.segments))
        state.turn_after.append(turn)
    cache.settle(added, used)
