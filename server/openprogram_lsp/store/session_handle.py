"""One session opened for one turn: the turn's only way into the session store.

``SessionHandle.open`` takes the session's cross-process lock (``SessionStore.hold_session``),
which brings the session's index up to what is on disk and recovers turns a dead process left
running; the handle then recovers this process's own turns that ended without finalizing
(those not in ``live``). That happens once, at open. From then on the turn reads and writes
the session through the handle's methods only: its history, its user node and running reply,
its tool and summary nodes, its ContextCommit, the end of the turn and its one commit.

The handle is the boundary between the dispatcher and the store's internals (the index, the
node log, the meta slots, the journal): what lies beneath may change without the turn's code
changing. While the handle is open no other process writes the session (every write needs
the lock this handle holds), so the store checks the session's stamp once, at open, and once
more at close, not at each of the turn's reads and writes (``SessionStore.hold_session``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from openprogram_lsp.core.chain import NodeChain, id_at
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.index import SessionIndex
from openprogram_lsp.store.owner import record_alive, record_is_self
from openprogram_lsp.store.session_store import SessionStore


class SessionHandle:
    """A session held open for one turn (``open``); every method is about that session."""

    __slots__ = ("_store", "id")

    def __init__(self, store: SessionStore, sid: str) -> None:
        self._store = store
        self.id = sid

    @classmethod
    @contextmanager
    def open(cls, store: SessionStore, sid: str, purpose: str, *,
             live: Callable[[], Collection[str]] = frozenset) -> Iterator[SessionHandle]:
        """Hold the session for a turn (SessionBusy when another process holds it) and
        recover, once, the turns left running: a dead process's (by the store, as it opens
        the session) and this process's own that are not ``live()`` (they ended without
        finalizing). Released when the block ends."""
        with store.hold_session(sid, purpose):
            handle = cls(store, sid)
            handle._recover_own(live())
            yield handle

    def _recover_own(self, live: Collection[str]) -> None:
        """Mark this process's turns that are no longer running here as interrupted (with
        their calls settled from their tool nodes) and commit that."""
        store, sid = self._store, self.id
        idx = store.index(sid)
        stale = [n for n in (idx.nodes[i] for i in list(idx.running))
                 if n.status == "running" and n.id not in live
                 and (record_is_self(n.metadata.get("owner"))
                      or not record_alive(n.metadata.get("owner")))]
        for node in stale:
            store.update_node(sid, node.id, status="interrupted",
                              text=(node.text + "\n\n[interrupted]").strip(),
                              tool_calls=store.settled(sid, node).tool_calls)
            store.end_turn(sid, node.id)
        if stale:
            store.commit_turn(sid, f"recover: {len(stale)} interrupted turn(s)")

    # -- reading ------------------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        """The session's directory (for files the turn keeps beside it, e.g. transcripts)."""
        return self._store.session_dir(self.id)

    def meta(self) -> dict[str, Any]:
        """A copy of the session's meta."""
        return self._store.meta(self.id)

    def head(self) -> str | None:
        """The session's active head node id."""
        return self._store.head(self.id)

    def node(self, node_id: str) -> Node:
        """One node (NotFound when the session has none of that id)."""
        return self._store.get_node(self.id, node_id)

    def chain(self, head: str | None = None) -> NodeChain:
        """The chain ending at ``head`` (default: the head), bodies read when looked at."""
        return self._store.chain_view(self.id, head)

    def branch(self, head: str) -> list[Node]:
        """The chain ending at ``head`` with every body read (running calls settled)."""
        return self._store.get_branch(self.id, head)

    def rules_forks(self) -> frozenset[str] | None:
        """Ids of the user nodes that may start a rules scope (``SessionStore.rules_forks``)."""
        return self._store.rules_forks(self.id)

    def summaries(self, history: Sequence[Node]) -> list[Node]:
        """Summary nodes hanging off nodes of ``history`` (``chain_summaries``)."""
        return chain_summaries(self._store.index(self.id), history)

    # -- writing ------------------------------------------------------------------------------

    def start_turn(self, user: Node, reply: Node, *, advance_head: bool) -> tuple[Node, Node]:
        """Write the user node and the running reply in one meta write
        (``SessionStore.start_turn``): before it nothing of the turn is acknowledged."""
        return self._store.start_turn(self.id, user, reply, advance_head=advance_head)

    def name_branch(self, head_id: str, name: str) -> None:
        """Name the branch whose tip is ``head_id``."""
        self._store.name_branch(self.id, head_id, name)

    def append(self, node: Node, *, advance_head: bool = False) -> Node:
        """Write a new node (a tool result, a summary); idempotent on its id."""
        return self._store.append(self.id, node, advance_head=advance_head)

    def update_node(self, node_id: str, **changes: Any) -> Node:
        """Rewrite a node's mutable fields (text, status, tool calls, metadata)."""
        return self._store.update_node(self.id, node_id, **changes)

    def write_context_commit(self, turn_id: str, record: dict[str, Any]) -> None:
        """Write the turn's immutable ContextCommit."""
        self._store.write_context_commit(self.id, turn_id, record)

    def end_turn(self, turn_id: str, **changes: Any) -> None:
        """Drop the turn from the running ones, merging ``changes`` into the meta."""
        self._store.end_turn(self.id, turn_id, **changes)

    def commit(self, message: str) -> str | None:
        """Commit everything the turn wrote as one git commit."""
        return self._store.commit_turn(self.id, message)


def chain_summaries(idx: SessionIndex, history: Sequence[Node]) -> list[Node]:
    """Summary nodes hanging off nodes of this chain (candidates to replace its older part),
    in chain order; the index carries them from turn to turn (``SessionIndex.summaries_on``)."""
    if not idx.summaries or not history:
        return []
    head = id_at(history, -1)
    on = idx.summaries_on(head)
    if len(history) != len(idx.chain_ids(head)):  # not that whole chain: check each caller
        on = [sid for sid in on if _at(history, idx.position(head, idx.nodes[sid].caller or ""),
                                       idx.nodes[sid].caller)]
    return [idx.nodes[sid] for sid in on]


def _at(history: Sequence[Node], at: int | None, caller: str | None) -> bool:
    return at is not None and at < len(history) and id_at(history, at) == caller
