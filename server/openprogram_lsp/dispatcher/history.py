"""History resolution: which chain a turn continues (inherit, new root, or sibling fork)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence

from openprogram_lsp.core.chain import NodeChain, id_at
from openprogram_lsp.core.errors import InvalidParams
from openprogram_lsp.core.types import INHERIT, Node
from openprogram_lsp.store.session_handle import SessionHandle


def resolve_history(session: SessionHandle,
                    branch_from: object) -> tuple[str | None, NodeChain]:
    """Return (predecessor of the new user node, history up to it: bodies read on demand)."""
    if branch_from is INHERIT:
        head = session.head()
        return (head, session.chain(head)) if head else (None, NodeChain.of([]))
    if branch_from is None:
        return None, NodeChain.of([])
    if not isinstance(branch_from, str):
        raise InvalidParams("branchFrom: must be \"inherit\", null or a node id")
    node = session.node(branch_from)
    if node.caller is not None or node.role not in ("user", "assistant", "system"):
        raise InvalidParams(f"branchFrom: {branch_from!r} is not a conversation message")
    return node.id, session.chain(node.id)


RULES_CHOICES = ("inherit", "reset", "copy")


def rules_branch(chain: Sequence[Node], stop: int = 0) -> str | None:
    """The rules scope of a chain's tip: the nearest user node that started a fork with
    ``rules: "reset"`` or ``"copy"`` (its id), else None (the session's own rules).
    Only ``chain[stop:]`` is looked at."""
    for node in reversed(chain[stop:]):
        if node.role == "user" and node.metadata.get("rules") in ("reset", "copy"):
            return node.id
    return None


RulesForks = Callable[[str], Collection[str] | None]
"""Ids of a session's user nodes that may start a reset or copy fork (a superset), or None
when the session keeps no such record (``SessionStore.rules_forks``)."""


class RulesScopes:
    """``rules_branch`` per session, remembered with the chain it was found on, so a later
    turn on the same line looks only at the nodes added since (a turn's cost, not the
    session's). A chain position's node determines every node before it (predecessors never
    change) and a fork's ``rules`` is fixed when its user node is written, so the remembered
    answer holds for every chain that runs through the remembered node.

    With nothing remembered (a new process, another line), ``forks`` names the few nodes that
    can be the answer: only their bodies are read, not the chain's."""

    def __init__(self, capacity: int = 256, forks: RulesForks | None = None) -> None:
        self.capacity = capacity
        self.forks = forks
        self._seen: OrderedDict[str, tuple[int, str, str | None]] = OrderedDict()
        self._lock = threading.Lock()

    def scope(self, sid: str, chain: Sequence[Node],
              forks: RulesForks | None = None) -> str | None:
        """``rules_branch(chain)`` of a chain of session ``sid`` (``forks``: where its fork
        record is read from, when not the store's)."""
        if not chain:
            return None
        with self._lock:
            seen = self._seen.get(sid)
        stop, known = 0, None
        if seen is not None:
            at, node_id, found = seen
            if at < len(chain) and id_at(chain, at) == node_id:
                stop, known = at + 1, found
        forks = forks or self.forks
        marked = forks(sid) if stop == 0 and forks is not None \
            and isinstance(chain, NodeChain) else None
        if marked is not None:
            assert isinstance(chain, NodeChain)
            found = _nearest_fork(chain, marked)
        else:
            found = rules_branch(chain, stop) or known
        with self._lock:
            self._seen[sid] = (len(chain) - 1, id_at(chain, -1), found)
            self._seen.move_to_end(sid)
            while len(self._seen) > self.capacity:
                self._seen.popitem(last=False)
        return found


def _nearest_fork(chain: NodeChain, marked: Collection[str]) -> str | None:
    """``rules_branch(chain)`` reading only the bodies of marked nodes and of those the chain
    holds itself (not yet in the store's record)."""
    stored = len(chain) - chain.held
    for i in range(len(chain) - 1, stored - 1, -1):
        found = rules_branch([chain[i]])
        if found is not None:
            return found
    if not marked:
        return None
    ids = chain.ids(0, stored)
    for i in range(stored - 1, -1, -1):
        if ids[i] in marked:
            found = rules_branch([chain[i]])
            if found is not None:
                return found
    return None
