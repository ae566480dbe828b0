"""Snip: drop the oldest whole turns until the history fits (free, no model call).

A turn is a user node and the assistant nodes after it; an assistant node renders its tool
calls together with their results, so dropping whole turns never separates a call from its
result. The last ``keep_turns`` turns (always including the last user message), the summary
segment and turns holding a referenced tool result are never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openprogram_lsp.context.budget import estimate_messages
from openprogram_lsp.context.types import Segment
from openprogram_lsp.core.types import Message, Node

SNIP_NOTE = ("[Context note: {n} earlier turn(s) were left out here to fit the context window. "
             "They are still in the session history; ask the user if you need them.]")


@dataclass(slots=True)
class SnipResult:
    """The kept segments (a note in place of the dropped turns) and what was dropped."""

    segments: list[Segment]
    dropped: list[str] = field(default_factory=list)
    dropped_turns: int = 0
    fits: bool = False


def _turns(segments: list[Segment]) -> list[list[int]]:
    groups: dict[int, list[int]] = {}
    for i, seg in enumerate(segments):
        if seg.turn >= 0:
            groups.setdefault(seg.turn, []).append(i)
    return [groups[t] for t in sorted(groups)]


def note_segment(n: int, anchor: Node) -> Segment:
    """A user-role note standing for ``n`` dropped turns."""
    msgs = [Message(role="user", content=SNIP_NOTE.format(n=n))]
    note = Node(id=f"{anchor.id}__snip_note", role="system", text=msgs[0].content)
    return Segment(note, msgs, estimate_messages(msgs), -1)


def snip(segments: list[Segment], *, budget: int, keep_turns: int = 2,
         protected: set[str] | None = None, floor: str | None = None,
         max_drop: int | None = None, floor_only: bool = False) -> SnipResult:
    """Drop oldest whole turns until the segments' tokens are at most ``budget``.

    ``floor`` is the first kept node of an earlier snip of the same session; turns before it
    are dropped first so the kept prefix (and the provider's prompt cache) stays stable.
    ``floor_only`` drops exactly those turns and no more (``fits`` says whether that was
    enough). ``max_drop`` caps the tokens snip may hide (hidden turns are in no summary); past
    it the result does not fit and the caller compacts instead.
    """
    protected = protected or set()
    total = sum(s.tokens for s in segments)
    if total <= budget:
        return SnipResult(list(segments), fits=True)
    turns = _turns(segments)
    droppable = turns[:max(0, len(turns) - max(1, keep_turns))]
    drop: set[int] = set()
    dropped_turns = 0
    note_cost = note_segment(0, segments[0].node).tokens
    floor_turn = next((t for t, idx in enumerate(turns)
                       if any(segments[i].node_id == floor for i in idx)), None)
    hidden = 0
    for t, idx in enumerate(droppable):
        if floor_only and (floor_turn is None or t >= floor_turn):
            break
        if any(segments[i].node_id in protected for i in idx):
            continue
        if total + note_cost <= budget and (floor_turn is None or t >= floor_turn):
            break
        size = sum(segments[i].tokens for i in idx)
        if max_drop is not None and hidden + size > max_drop:
            return SnipResult(list(segments), fits=False)
        drop.update(idx)
        dropped_turns += 1
        hidden += size
        total -= size
    if not drop:
        return SnipResult(list(segments), fits=False)
    kept: list[Segment] = []
    noted = False
    for i, seg in enumerate(segments):
        if i in drop:
            if not noted:
                kept.append(note_segment(dropped_turns, seg.node))
                noted = True
            continue
        kept.append(seg)
    return SnipResult(kept, [segments[i].node_id for i in sorted(drop)], dropped_turns,
                      fits=total + note_cost <= budget)
