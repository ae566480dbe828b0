"""The rendered chain of each session, kept between turns and extended by the new nodes.

A turn's chain is the previous turn's chain plus a few nodes (the last reply, the new message),
so everything derived per node (segments, the flat message list, token and character sums, kept
ids and their ranges, idle-gap points, the messages digest) is carried over in ``Chunked``
sequences (shared, never copied) and only the new part is worked out. The carried part is
checked, never trusted: the chain must run through the node the state ended at (ids cannot
change meaning: predecessors are immutable), the summary and the start must be the same, and no
carried node may have been rewritten since. For a store's chain that is asked of the store's
body log (the ids written or dropped since the state's mark: a turn's cost, not the session's);
for other chains, and when the log no longer reaches back, every carried node must be the very
body object the chain holds now. From the first node that differs (a finalized reply, an
expanded message, an edit of history, a reload) the state is worked out again. The result
equals a from-scratch rendering (``tests/context/test_incremental_sessions.py``).
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from operator import is_

from openprogram_lsp.context.digest import DigestState
from openprogram_lsp.context.microcompact import scan_gaps
from openprogram_lsp.context.render import RenderCache, reuse_or_render
from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.chain import Mark, NodeChain
from openprogram_lsp.core.chunked import Chunked
from openprogram_lsp.core.images import image_rule
from openprogram_lsp.core.types import Message, Node

RangeItem = str | list[int]


@dataclass(slots=True, repr=False)
class Rendered:
    """One chain's rendering and what is derived from it, per segment where it can be cut.

    Every sequence is a ``Chunked``: a state is never changed once made (earlier preps hold
    it), a later one shares its chunks."""

    start: int
    summary: Node | None
    threshold: float
    nodes: Chunked[Node] = field(default_factory=Chunked)  # chain[start:end]
    seg_end: Chunked[int] = field(default_factory=Chunked)  # per node: segments after it
    turn_after: Chunked[int] = field(default_factory=Chunked)  # per node: turn counter after it
    segments: Chunked[Segment] = field(default_factory=Chunked)
    positions: Chunked[int] = field(default_factory=Chunked)  # per segment: chain position (-1)
    msg_end: Chunked[int] = field(default_factory=Chunked)  # per segment: messages after it
    tok_end: Chunked[int] = field(default_factory=Chunked)  # per segment: tokens after it
    chr_end: Chunked[int] = field(default_factory=Chunked)  # per segment: content characters
    messages: Chunked[Message] = field(default_factory=Chunked)
    kept: Chunked[str] = field(default_factory=Chunked)
    ranges: Chunked[RangeItem] = field(default_factory=Chunked)
    gaps: Chunked[int] = field(default_factory=Chunked)  # scan_gaps over all segments
    gap_prev: Node | None = None
    dig: DigestState = field(default_factory=DigestState)  # of ``messages``
    dig_before_last: DigestState | None = None  # ... of all but the last segment's
    mark: Mark | None = None  # the chain's body log when its bodies were read
    stored: int = 0  # leading nodes that were the store's bodies as of ``mark``
    rule: str = field(default_factory=image_rule.get)  # the image token rule it counted by

    @property
    def tokens(self) -> int:
        """Estimated tokens of all segments."""
        return self.tok_end.last if self.tok_end else 0

    @property
    def chars(self) -> int:
        """Summed ``len(content)`` of ``messages``."""
        return self.chr_end.last if self.chr_end else 0

    @property
    def digest(self) -> str:
        """``messages_digest`` of ``messages``."""
        return self.dig.hexdigest()

    def copy_to(self, nodes: int) -> Rendered:
        """A state holding this one's first ``nodes`` nodes (this one is never changed)."""
        cut = self.seg_end[nodes - 1] if nodes else (1 if self.summary is not None else 0)
        out = Rendered(self.start, self.summary, self.threshold, self.nodes.head(nodes),
                       self.seg_end.head(nodes), self.turn_after.head(nodes),
                       self.segments.head(cut), self.positions.head(cut),
                       self.msg_end.head(cut), self.tok_end.head(cut), self.chr_end.head(cut))
        out.messages = self.messages.head(out.msg_end.last) if cut else Chunked()
        out.kept = self.kept.head(cut)
        out.ranges = _cut_ranges(self.ranges, self.positions[cut - 1] if cut else -1,
                                 summary=self.summary is not None and cut > 0)
        out.gaps = self.gaps.head(bisect.bisect_left(self.gaps, cut))
        out.gap_prev = next((s.node for s in reversed(out.segments)
                             if s.node.role in ("user", "assistant")), None)
        out.mark, out.stored = self.mark, min(self.stored, nodes)
        n = len(self.segments)
        before = out.msg_end[-2] if cut > 1 else 0
        if cut == n:
            out.dig, out.dig_before_last = self.dig.copy(), \
                self.dig_before_last.copy() if self.dig_before_last else None
        elif cut == n - 1 and self.dig_before_last is not None:
            out.dig = self.dig_before_last.copy()
        else:  # cut further back (an edit of history): the groups before the cut are kept
            out.dig = self.dig.cut(self.messages, len(out.messages))
            out.dig_before_last = self.dig.cut(self.messages, before) if cut else None
        return out

    def add(self, added: list[Segment], positions: list[int]) -> None:
        """Append segments (rendered from the chain positions given, -1: the summary)."""
        if not added:
            return
        msgs: list[Message] = []
        msg_end: list[int] = []
        tok_end: list[int] = []
        chr_end: list[int] = []
        count, tokens, chars = len(self.messages), self.tokens, self.chars
        for seg in added:
            msgs.extend(seg.messages)
            count += len(seg.messages)
            tokens += seg.tokens
            chars += sum(len(m.content) for m in seg.messages)
            msg_end.append(count)
            tok_end.append(tokens)
            chr_end.append(chars)
        last = len(msgs) - len(added[-1].messages)
        self.dig.update(msgs[:last])
        self.dig_before_last = self.dig.copy()
        self.dig.update(msgs[last:])
        self.segments = self.segments.plus(added)
        self.positions = self.positions.plus(positions)
        self.messages = self.messages.plus(msgs)
        self.msg_end = self.msg_end.plus(msg_end)
        self.tok_end = self.tok_end.plus(tok_end)
        self.chr_end = self.chr_end.plus(chr_end)
        self.kept = self.kept.plus(s.node.id for s in added)
        self.ranges = _add_ranges(self.ranges, positions, [s.node.id for s in added])


def _add_ranges(ranges: Chunked[RangeItem], positions: list[int],
                ids: list[str]) -> Chunked[RangeItem]:
    """``ranges`` with the runs of ``positions`` appended (a position -1: its id as it is)."""
    out: list[RangeItem] = []
    last = ranges.last if ranges else None
    if isinstance(last, list):
        out.append(last)
        ranges = ranges.head(len(ranges) - 1)
    for at, nid in zip(positions, ids, strict=True):
        prev = out[-1] if out else None
        if at < 0:
            out.append(nid)
        elif isinstance(prev, list) and prev[1] + 1 == at:
            out[-1] = [prev[0], at]
        else:
            out.append([at, at])
    return ranges.plus(out)


def _cut_ranges(ranges: Chunked[RangeItem], last: int, *, summary: bool) -> Chunked[RangeItem]:
    """The ranges of positions up to ``last`` (the summary's id kept when it is)."""
    keep = len(ranges)
    while keep:  # from the end: a cut drops the last runs only
        item = ranges[keep - 1]
        if isinstance(item, str) or item[0] <= last:
            break
        keep -= 1
    out = ranges.head(keep)
    if keep:
        item = out.last
        if isinstance(item, list) and item[1] > last:
            out = out.head(keep - 1).plus([[item[0], last]])
        elif isinstance(item, str) and not summary:
            out = out.head(keep - 1)
    return out


def _carried(old: Rendered, chain: NodeChain, start: int) -> tuple[int, bool]:
    """How many of ``old``'s nodes are still what ``chain`` holds from ``start`` on, and
    whether the store's body log answered (else every carried body was compared)."""
    k = len(old.nodes)
    mark, now = old.mark, chain.mark
    changed = mark.log.since(mark.at) if mark is not None and now is not None \
        and mark.log is now.log and old.stored <= chain.stored - start else None
    if changed is None:  # no log to ask: every carried node must be the chain's own body
        nodes = chain[start:start + k]
        if all(map(is_, nodes[:k - 1], old.nodes[:k - 1])):
            return (k if nodes[k - 1] is old.nodes[k - 1] else k - 1), False
        return next(i for i in range(k) if nodes[i] is not old.nodes[i]), False
    keep = k
    for nid in changed:  # written or dropped since: carried only up to it
        at = chain.position(nid)
        if at is not None and start <= at < start + keep:
            keep = at - start
    stored = min(keep, old.stored)
    if stored < keep:  # the rest came from outside the store (a new or expanded message)
        for i, node in enumerate(chain[start + stored:start + keep], stored):
            if node is not old.nodes[i]:
                return i, True
    return keep, True


class PrefixCache:
    """The last rendering of each session (``capacity`` sessions, least recent dropped)."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, Rendered] = OrderedDict()
        self._lock = threading.Lock()
        self.reused = 0  # nodes carried over so far (tests)
        self.by_log = 0  # carried states checked through the store's body log (tests)

    def render(self, sid: str, chain: NodeChain, summary: Node | None, start: int,
               cache: RenderCache, threshold: float) -> Rendered:
        """The rendering of ``chain[start:]`` after ``summary``, reusing the session's last."""
        size = len(chain) - start
        with self._lock:
            old = self._items.get(sid)
        keep = 0
        if old is not None and old.start == start and old.summary is summary \
                and old.threshold == threshold and old.rule == image_rule.get() \
                and old.nodes and len(old.nodes) <= size \
                and chain.id_at(start + len(old.nodes) - 1) == old.nodes.last.id:
            keep, logged = _carried(old, chain, start)
            self.by_log += logged
        if keep and old is not None:
            state = old.copy_to(keep)
            self.reused += keep
        else:
            state = Rendered(start, summary, threshold)
            if summary is not None:
                msgs, tokens = cache.render(summary)
                state.add([Segment(summary, msgs, tokens, -1)], [-1])
        begin = len(state.segments)
        state.mark = chain.mark
        _extend(state, chain[start + keep:], keep, cache)
        state.stored = max(0, min(size, chain.stored - start))
        added: list[int] = []
        state.gap_prev = scan_gaps(state.segments, begin, state.gap_prev, threshold, added)
        state.gaps = state.gaps.plus(added)
        with self._lock:
            self._items[sid] = state
            self._items.move_to_end(sid)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return state


def _extend(state: Rendered, nodes: list[Node], begin: int, cache: RenderCache) -> None:
    """Render ``nodes`` (the chain from node ``begin`` of the state on) onto the state (what
    ``render._segments`` does per node)."""
    added: list[Segment] = []
    used: list[str] = []
    segs: list[Segment] = []
    at: list[int] = []
    seg_end: list[int] = []
    turn_after: list[int] = []
    cached = cache._items.get
    turn = state.turn_after.last if begin else -1
    base = state.start + begin
    count = len(state.segments)
    for i, node in enumerate(nodes):
        meta = node.metadata
        skip = bool(meta) and meta.get("command") == "compact"
        if not skip and (node.role == "user" or turn < 0):
            turn += 1
        if not skip:
            seg = cached(node.id)
            seg = reuse_or_render(seg, node, turn, used, added)
            if seg.messages:
                segs.append(seg)
                at.append(base + i)
                count += 1
        seg_end.append(count)
        turn_after.append(turn)
    state.add(segs, at)
    state.nodes = state.nodes.plus(nodes)
    state.seg_end = state.seg_end.plus(seg_end)
    state.turn_after = state.turn_after.plus(turn_after)
    cache.settle(added, used)
