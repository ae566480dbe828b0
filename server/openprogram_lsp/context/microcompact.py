"""Idle-gap microcompact: after a long pause, clear old large tool results in the prepared copy.

After ``GAP_THRESHOLD_SECONDS`` without a turn the provider's prompt cache has expired, so
rewriting old tool results costs nothing extra. Every idle gap in the chain (found from node
times, plus the gap before the current turn from ``last_turn_at``) clears the large tool results
before it, except the ``keep_recent`` most recent ones and the referenced ones. Gaps found from
node times make the decision stable: a result cleared once stays cleared on later turns, so the
prompt prefix does not change back. Only copies of messages are changed, never DAG nodes.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from openprogram_lsp.context.budget import estimate_messages, estimate_text
from openprogram_lsp.context.references import result_key
from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.types import Node

PLACEHOLDER = ("[Old tool result cleared after an idle gap (was about {tokens} tokens). The full "
               "output is kept in the session history; run the tool again if you need it.]")


class ResultRef(NamedTuple):
    """Where one tool result sits: segment index, message index, key."""

    seg: int
    msg: int
    key: str


def parse_time(value: str | None) -> float | None:
    """Seconds since the epoch of an ISO-8601 time, or None."""
    if not value:
        return None
    return _parse(value)


@functools.lru_cache(maxsize=65_536)
def _parse(value: str) -> float | None:
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def _finished_text(node: Node) -> str:
    value = node.metadata.get("finishedAt") or node.created_at
    return value if isinstance(value, str) else ""


def _same_hour(a: str, b: str, threshold: float) -> bool:
    """Cheap pre-check: two UTC times in the same clock hour are less than an hour apart."""
    return threshold >= 3600 and a[-1:] == "Z" and b[-1:] == "Z" and len(a) > 13 \
        and a[:13] == b[:13]


def scan_gaps(segments: Sequence[Segment], begin: int, prev: Node | None, threshold: float,
              points: list[int]) -> Node | None:
    """Append to ``points`` the indexes from ``begin`` on of user segments that start more
    than ``threshold`` after the previous reply (``prev``: the last user or assistant node
    before ``begin``); returns the last such node, to continue from later."""
    for i in range(begin, len(segments)):
        node = segments[i].node
        role = node.role
        if role == "user":
            if prev is not None:
                at, end = node.created_at, _finished_text(prev)
                if not _same_hour(at, end, threshold):
                    start, stop = parse_time(at), parse_time(end)
                    if start is not None and stop is not None and start - stop > threshold:
                        points.append(i)
            prev = node
        elif role == "assistant":
            prev = node
    return prev


def gap_points(segments: Sequence[Segment], *, threshold: float, last_turn_at: str | None,
               now: float, scanned: Sequence[int] | None = None) -> tuple[list[int], bool]:
    """Segment indexes that start after an idle gap, and whether the current turn is one.

    ``scanned``: what ``scan_gaps`` found over all of ``segments`` (kept by the caller)."""
    last_user = next((i for i in range(len(segments) - 1, -1, -1)
                      if segments[i].node.role == "user"), -1)
    if scanned is None:
        found: list[int] = []
        scan_gaps(segments, 0, None, threshold, found)
        scanned = found
    points = list(scanned[:-1] if scanned and scanned[-1] == last_user else scanned)
    current = False
    last_at = parse_time(last_turn_at)
    if last_user >= 0 and last_at is not None and now - last_at > threshold:
        points.append(last_user)
        current = True
    return points, current


def tool_results(segments: list[Segment]) -> list[ResultRef]:
    """Every tool result in the segments, in order."""
    out = []
    for si, seg in enumerate(segments):
        for mi, m in enumerate(seg.messages):
            if m.role == "tool" and m.tool_call_id is not None:
                out.append(ResultRef(si, mi, result_key(seg.node_id, m.tool_call_id)))
    return out


def microcompact(segments: list[Segment], gaps: list[int], *, keep_recent: int = 5,
                 min_tokens: int = 500, protected: set[str] | None = None
                 ) -> tuple[list[Segment], list[str]]:
    """Copies of the segments with old large results replaced; returns (segments, keys)."""
    if not gaps:
        return segments, []
    protected = protected or set()
    results = tool_results(segments)
    clear: dict[int, dict[int, int]] = {}
    keys: list[str] = []
    done = 0  # results before this index were already considered for an earlier gap
    for g in sorted(set(gaps)):
        limit = bisect.bisect_left(results, g, key=lambda r: r.seg) - keep_recent
        for r in results[done:max(done, limit)]:
            if r.key in protected:
                continue
            content = segments[r.seg].messages[r.msg].content
            tokens = estimate_text(content)
            if tokens < min_tokens:
                continue
            clear.setdefault(r.seg, {})[r.msg] = tokens
            keys.append(r.key)
        done = max(done, limit)
    if not clear:
        return segments, []
    out = list(segments)
    for si, repl in clear.items():
        out[si] = cleared_segment(segments[si], repl)
    return out, keys


def cleared_segment(seg: Segment, repl: dict[int, int]) -> Segment:
    """A copy of ``seg`` with the messages at the indexes given (to their estimated tokens)
    replaced by the placeholder."""
    msgs = [m.model_copy(update={"content": PLACEHOLDER.format(tokens=repl[mi])})
            if mi in repl else m for mi, m in enumerate(seg.messages)]
    return Segment(seg.node, msgs, estimate_messages(msgs), seg.turn)
