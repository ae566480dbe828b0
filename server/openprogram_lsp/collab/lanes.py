"""Lanes: one FIFO inbox per target branch, so runs on a branch never overlap or reorder.

A lane is keyed by the branch's name, by the agent that owns it, or by the node it was first
addressed at. Jobs take the lane's lock first thing (the runner starts jobs in submission
order and asyncio locks are FIFO), which makes the lock's waiters the branch's inbox.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openprogram_lsp.store.session_store import SessionStore

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher import Dispatcher
    from openprogram_lsp.dispatcher.active import ActiveTurn

LaneKey = tuple[str, str]  # ("name", branch name) | ("agent", agent id) | ("node", node id)


@dataclass(slots=True, eq=False)
class Lane:
    """The inbox of one branch."""

    session_id: str
    key: LaneKey
    tip: str | None = None  # last known tip (None: the branch does not exist yet)
    follow: bool = True  # continue from the newest descendant of ``tip`` (False: fork at it)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0

    @property
    def display(self) -> str:
        """How the lane is named to a model."""
        kind, value = self.key
        return value if kind in ("name", "agent") else f"{self.session_id}:{value}"


def newest_descendant(store: SessionStore, sid: str, node_id: str) -> str:
    """The tip a branch grew to from ``node_id``: the head if it descends, else the newest tip."""
    idx = store.index(sid)
    leaves: list[str] = []
    stack = [node_id]
    seen: set[str] = set()
    while stack:
        cur = stack.pop()
        if cur in seen:
            continue
        seen.add(cur)
        kids = [k for k in idx.children.get(cur, ()) if idx.is_chain_id(k)]
        if kids:
            stack.extend(kids)
        else:
            leaves.append(cur)
    head = idx.meta.get("headId")
    if head in leaves:
        return str(head)
    return max(leaves, key=lambda n: idx.seq.get(n, 0)) if leaves else node_id


class Lanes:
    """Every lane of the process, found by key or by a tip they currently point at."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self._lock = threading.Lock()
        self._lanes: dict[tuple[str, LaneKey], Lane] = {}

    @property
    def store(self) -> SessionStore:
        return self.dispatcher.services.store

    def get(self, sid: str, key: LaneKey, *, tip: str | None = None,
            follow: bool = True) -> Lane:
        """The lane with this key, or the lane already at this tip, or a new one."""
        with self._lock:
            lane = self._lanes.get((sid, key))
            if lane is None and tip is not None:
                lane = next((ln for ln in self._lanes.values()
                             if ln.session_id == sid and ln.tip == tip), None)
            if lane is None:
                lane = Lane(sid, key, tip=tip, follow=follow)
                self._lanes[(sid, key)] = lane
            return lane

    def find(self, sid: str, key: LaneKey) -> Lane | None:
        """An existing lane, if any."""
        with self._lock:
            return self._lanes.get((sid, key))

    def current_tip(self, lane: Lane) -> str | None:
        """Where the next run on this lane starts."""
        store, sid = self.store, lane.session_id
        if lane.key[0] == "name":
            named = store.find_branch(sid, lane.key[1])
            if named is not None:
                return named
        if lane.tip is None or not store.has_node(sid, lane.tip):
            return None
        return newest_descendant(store, sid, lane.tip) if lane.follow else lane.tip

    def busy_with(self, sid: str, tip: str) -> ActiveTurn | None:
        """The running turn that holds this tip, if any."""
        for turn in self.dispatcher.active_turns(sid):
            if tip in (turn.turn_id, turn.user_node_id):
                return turn
        return None
