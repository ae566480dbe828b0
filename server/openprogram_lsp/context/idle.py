"""The idle-gap pass (reference scan and microcompact) carried from one turn to the next.

Once a session's kept history holds an idle gap, every turn scans references and clears old
results. Done from scratch that is a pass over every segment and message, and the prompt, its
token count and its digest are worked out again. ``IdleState`` keeps, per session, the
reference scan (``RefScan``), the tool results in order with their sizes, and the last
turn's output (segments and messages with the cleared results replaced, as ``Chunked``
sequences sharing every chunk nothing was replaced in, their token and character sums), and
works out only what can have changed: the segments after the first one that is not the very
object it saw last (new ones, or the last one rendered again), the results whose referenced
state changed, the results between the old and the new clearing limit. Anything else (a cut
further back, other settings) is done from scratch by a new state. The output equals
``scan_references`` plus ``microcompact`` over the same segments
(``tests/context/test_idle.py``, ``tests/context/test_incremental_sessions.py``).
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from openprogram_lsp.context.budget import estimate_text
from openprogram_lsp.context.digest import DigestState, state_of
from openprogram_lsp.context.microcompact import ResultRef, cleared_segment
from openprogram_lsp.context.prefix import Rendered
from openprogram_lsp.context.references import RefScan, TermCache, result_key
from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.chunked import Chunked
from openprogram_lsp.core.types import Message


@dataclass(slots=True)
class IdleOut:
    """One turn's idle-gap result: what ``scan_references`` and ``microcompact`` give, and
    the prompt it makes (``segments is base.segments`` when nothing is cleared)."""

    protected: list[str]  # sorted
    keys: list[str]
    segments: Chunked[Segment]
    messages: Chunked[Message]
    tokens: int
    chars: int
    digest: DigestState


def _seg_of(r: ResultRef) -> int:
    return r.seg


class IdleState:
    """One session's carried idle-gap pass (see the module docstring)."""

    def __init__(self, cache: TermCache | None, keep_recent: int, min_tokens: int) -> None:
        self.keep_recent, self.min_tokens = keep_recent, min_tokens
        self.refs = RefScan(cache)
        self.seen: Chunked[Segment] = Chunked()  # the segments of the last output
        self.results: list[ResultRef] = []  # every tool result of ``seen``, in order
        self.tokens: list[int] = []  # ... and its content's estimate
        self.index: dict[str, list[int]] = {}  # result key -> its indexes in ``results``
        self.limit = 0  # results before it may be cleared (the last output's)
        self.cleared: set[int] = set()  # indexes in ``results`` cleared in the last output
        self.keys: list[str] = []  # their keys, in order (shared by outputs: never changed)
        self.keys_stale = False  # ``cleared`` changed since ``keys`` was made
        self.delta: dict[int, tuple[int, int]] = {}  # segment -> (tokens, chars) it changed by
        self.tok_delta = self.chr_delta = 0  # their sums
        self.out_segments: Chunked[Segment] = Chunked()
        self.out_messages: Chunked[Message] = Chunked()
        self.groups: dict[int, tuple[tuple[Message, ...], bytes]] = {}  # digest groups
        self.protected: list[str] = []  # ``refs.referenced``, sorted
        self.carried = 0  # segments not looked at again by the last run (tests)
        self.taken_back = False  # ... which took the last one back

    def run(self, base: Rendered, gaps: Sequence[int]) -> IdleOut | None:
        """The pass over ``base.segments`` for ``gaps`` (as ``gap_points`` gives them), or
        None when this state cannot go on from what it saw (make a new one)."""
        segs = base.segments
        seen = len(self.seen)
        common = segs.same_prefix(self.seen, seen)
        if common < seen - 1 or (common == seen - 1 and not self.refs.take_back()):
            return None
        self.carried, self.taken_back = common, common < seen
        # the segments from ``common`` on are new objects: their results are added again
        cut = bisect.bisect_left(self.results, common, key=_seg_of)
        for i in range(cut, len(self.results)):
            at = self.index.get(self.results[i].key)
            if at is not None:
                at.remove(i)
                if not at:
                    del self.index[self.results[i].key]
            if i in self.cleared:
                self.cleared.remove(i)
                self.keys_stale = True
        del self.results[cut:], self.tokens[cut:]
        for s in range(common, seen):
            tokens, chars = self.delta.pop(s, (0, 0))
            self.tok_delta -= tokens
            self.chr_delta -= chars
        for i in range(common, len(segs)):
            self._add(i, segs[i], last=i == len(segs) - 1)
        self.seen = segs
        return self._output(base, common, gaps)

    def _add(self, si: int, seg: Segment, *, last: bool) -> None:
        self.refs.add(seg, last=last)
        for mi, m in enumerate(seg.messages):
            if m.role == "tool" and m.tool_call_id is not None:
                key = result_key(seg.node_id, m.tool_call_id)
                self.index.setdefault(key, []).append(len(self.results))
                self.results.append(ResultRef(si, mi, key))
                self.tokens.append(estimate_text(m.content))

    def _output(self, base: Rendered, common: int, gaps: Sequence[int]) -> IdleOut:
        results, referenced = self.results, self.refs.referenced
        first = bisect.bisect_left(results, common, key=_seg_of)  # results of redone segments
        limit = max(0, bisect.bisect_left(results, max(gaps), key=_seg_of) - self.keep_recent) \
            if gaps else 0
        touched: set[int] = set()
        candidates = set(range(first, len(results)))
        candidates.update(range(min(self.limit, limit), min(max(self.limit, limit),
                                                            len(results))))
        index, changed = self.index, self.refs.changed
        for k in changed:
            candidates.update(index.get(k, ()))
        if len(changed) > 64:  # many (a new state): sorted once
            self.protected = sorted(referenced)
            changed.clear()
        protected = self.protected
        for k in changed:  # a few: each put in its place
            at = bisect.bisect_left(protected, k)
            there = at < len(protected) and protected[at] == k
            if k in referenced and not there:
                protected.insert(at, k)
            elif there and k not in referenced:
                del protected[at]
        changed.clear()
        for i in candidates:
            want = i < limit and self.tokens[i] >= self.min_tokens \
                and results[i].key not in referenced
            there = i in self.cleared
            if want != there or (want and i >= first):
                touched.add(results[i].seg)
                if want != there:
                    self.keys_stale = True
                    if want:
                        self.cleared.add(i)
                    else:
                        self.cleared.remove(i)
        self.limit = limit
        segs = base.segments
        msg_start = base.msg_end[common - 1] if common else 0
        out_segs = self.out_segments.head(common).plus(segs[common:])
        out_msgs = self.out_messages.head(msg_start).plus(base.messages[msg_start:])
        seg_updates: dict[int, Segment] = {}
        msg_updates: dict[int, Message] = {}
        for s in touched:
            seg = segs[s]
            lo = bisect.bisect_left(results, s, key=_seg_of)
            hi = bisect.bisect_left(results, s + 1, key=_seg_of)
            repl = {results[i].msg: self.tokens[i] for i in range(lo, hi) if i in self.cleared}
            new = cleared_segment(seg, repl) if repl else seg
            seg_updates[s] = new
            at = base.msg_end[s - 1] if s else 0
            for mi, m in enumerate(new.messages):
                msg_updates[at + mi] = m
            tokens, chars = self.delta.pop(s, (0, 0))
            self.tok_delta -= tokens
            self.chr_delta -= chars
            if repl:
                tokens = new.tokens - seg.tokens
                chars = sum(len(a.content) - len(b.content)
                            for a, b in zip(new.messages, seg.messages, strict=True))
                self.delta[s] = (tokens, chars)
                self.tok_delta += tokens
                self.chr_delta += chars
        self.out_segments = out_segs.replaced(seg_updates)
        self.out_messages = out_msgs.replaced(msg_updates)
        if self.keys_stale:  # else the last output's list, shared (a new one when they change)
            self.keys = [results[i].key for i in sorted(self.cleared)]
            self.keys_stale = False
        keys = self.keys
        if not keys:  # nothing cleared: the carried rendering as it is
            self.out_segments, self.out_messages = segs, base.messages
            self.groups.clear()
            return IdleOut(list(protected), [], segs, base.messages, base.tokens, base.chars,
                           base.dig)
        tokens, chars = base.tokens + self.tok_delta, base.chars + self.chr_delta
        digest = state_of(self.out_messages, base.messages, base.dig, self.groups)
        return IdleOut(list(protected), keys, self.out_segments, self.out_messages, tokens, chars,
                       digest)


class IdleCache:
    """The carried idle-gap state of each session (``capacity`` sessions, least recent
    dropped); a state is taken out while a prepare uses it, so two never share one."""

    def __init__(self, capacity: int = 16) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, IdleState] = OrderedDict()
        self._lock = threading.Lock()
        self.fresh = self.carried = self.taken_back = 0  # counts over all runs (tests)

    def run(self, sid: str, base: Rendered, gaps: Sequence[int], cache: TermCache,
            *, keep_recent: int, min_tokens: int) -> IdleOut:
        """The idle-gap pass over ``base`` (the session's carried state when it fits)."""
        with self._lock:
            state = self._items.pop(sid, None)
        out = None
        if state is not None and (state.keep_recent, state.min_tokens) == (keep_recent,
                                                                            min_tokens):
            out = state.run(base, gaps)
        if state is None or out is None:
            self.fresh += 1
            state = IdleState(cache, keep_recent, min_tokens)
            out = state.run(base, gaps)
            assert out is not None  # a new state has seen nothing to differ from
        self.carried += state.carried
        self.taken_back += state.taken_back
        with self._lock:
            self._items[sid] = state
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return out
