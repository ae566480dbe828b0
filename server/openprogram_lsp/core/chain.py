"""A conversation chain whose ids are known up front and whose node bodies are read on demand.

A turn needs the whole chain's shape (positions, the ids a summary or a ContextCommit range
refers to) but only the bodies of what it renders: the tail after the last summary and a few
nodes it inspects. ``NodeChain`` gives both without a list of every node, so building the
history of a turn costs what the turn looks at, not what the session holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple, overload

from openprogram_lsp.core.types import Node

Fetch = Callable[[list[str]], list[Node]]
"""Bodies of some ids, in order."""


class BodyLog:
    """The ids whose bodies a store wrote or dropped, in order (the oldest forgotten).

    A reader that kept bodies from an earlier ``count`` asks ``since(count)`` which of them
    may have changed: the answer costs what was written since, not what is kept. ``None``
    means the log no longer reaches back that far (look at every body again).
    """

    __slots__ = ("_base", "_ids", "_lock", "keep")

    def __init__(self, keep: int = 4096) -> None:
        self.keep = keep
        self._ids: list[str] = []
        self._base = 0  # entries forgotten so far
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        """Entries noted so far."""
        with self._lock:
            return self._base + len(self._ids)

    def note(self, nid: str) -> None:
        """A body was written, replaced or dropped."""
        with self._lock:
            self._ids.append(nid)
            if len(self._ids) > 2 * self.keep:
                cut = len(self._ids) - self.keep
                del self._ids[:cut]
                self._base += cut

    def since(self, count: int) -> list[str] | None:
        """Ids noted after the first ``count`` entries, or None when already forgotten."""
        with self._lock:
            if count < self._base:
                return None
            return self._ids[count - self._base:]


class Mark(NamedTuple):
    """Where a store's ``BodyLog`` stood before a chain's bodies were looked up."""

    log: BodyLog
    at: int  # its ``count`` then


class NodeChain(Sequence[Node]):
    """Nodes root first: ``ids[:n]`` read through ``fetch``, then nodes held directly.

    ``ids`` may be a list another owner appends to later: only its first ``n`` entries are
    part of this chain. Never changed in place; ``plus`` and ``with_last`` return new chains.

    A store's chain also carries ``mark`` (its body log before any body was read: what a
    reader kept from this chain is still current unless the log names it later) and
    ``positions`` (each id's place in ``ids``; entries past ``n`` or of other lines are
    checked against ``ids``, so a map the owner extends later is fine).
    """

    __slots__ = ("_fetch", "_ids", "_n", "_own", "_positions", "mark")

    def __init__(self, ids: Sequence[str], fetch: Fetch, n: int | None = None,
                 own: Sequence[Node] = (), *, mark: Mark | None = None,
                 positions: Mapping[str, int] | None = None) -> None:
        self._ids = ids
        self._n = len(ids) if n is None else n
        self._fetch = fetch
        self._own = tuple(own)
        self.mark = mark
        self._positions = positions

    @property
    def indexed(self) -> bool:
        """Whether ``position`` is a lookup (a store's chain), not a search."""
        return self._positions is not None

    @property
    def stored(self) -> int:
        """How many leading nodes are read through ``fetch`` (the rest are held here)."""
        return self._n

    def position(self, nid: str) -> int | None:
        """Where ``nid`` is on this chain, or None (without ``positions``: by looking)."""
        if self._positions is not None:
            at = self._positions.get(nid)
            if at is not None and at < self._n and self._ids[at] == nid:
                return at
        else:
            for k in range(self._n):
                if self._ids[k] == nid:
                    return k
        for k, node in enumerate(self._own):
            if node.id == nid:
                return self._n + k
        return None

    @classmethod
    def of(cls, nodes: Sequence[Node]) -> NodeChain:
        """A chain of nodes held in memory (a list, or another chain as it is)."""
        if isinstance(nodes, NodeChain):
            return nodes
        return cls((), _no_fetch, 0, nodes)

    def __len__(self) -> int:
        return self._n + len(self._own)

    def id_at(self, i: int) -> str:
        """The id at position ``i`` (negative from the end) without reading its body."""
        size = len(self)
        if i < 0:
            i += size
        if not 0 <= i < size:
            raise IndexError(i)
        return self._ids[i] if i < self._n else self._own[i - self._n].id

    @property
    def held(self) -> int:
        """How many nodes at the end are held directly (``plus``, ``with_last``), not read
        through ``fetch``."""
        return len(self._own)

    def ids(self, start: int = 0, stop: int | None = None) -> list[str]:
        """The ids of ``self[start:stop]``."""
        start, stop, _ = slice(start, stop).indices(len(self))
        head = list(self._ids[start:min(stop, self._n)]) if start < self._n else []
        own = [n.id for n in self._own[max(0, start - self._n):max(0, stop - self._n)]]
        return head + own

    @overload
    def __getitem__(self, i: int) -> Node: ...
    @overload
    def __getitem__(self, i: slice) -> list[Node]: ...
    def __getitem__(self, i: int | slice) -> Node | list[Node]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                return [self[k] for k in range(start, stop, step)]
            head = self._fetch(list(self._ids[start:min(stop, self._n)])) \
                if start < min(stop, self._n) else []
            return head + list(self._own[max(0, start - self._n):max(0, stop - self._n)])
        size = len(self)
        if i < 0:
            i += size
        if not 0 <= i < size:
            raise IndexError(i)
        if i >= self._n:
            return self._own[i - self._n]
        return self._fetch([self._ids[i]])[0]

    def __iter__(self) -> Iterator[Node]:
        batch = 512
        for start in range(0, self._n, batch):
            yield from self._fetch(list(self._ids[start:min(self._n, start + batch)]))
        yield from self._own

    def prefix(self, n: int) -> NodeChain:
        """The chain's first ``n`` nodes (no body read)."""
        n = max(0, min(n, len(self)))
        return NodeChain(self._ids, self._fetch, min(n, self._n),
                         self._own[:max(0, n - self._n)], mark=self.mark,
                         positions=self._positions)

    def plus(self, *nodes: Node) -> NodeChain:
        """This chain with nodes appended."""
        return NodeChain(self._ids, self._fetch, self._n, (*self._own, *nodes), mark=self.mark,
                         positions=self._positions)

    def with_last(self, node: Node) -> NodeChain:
        """This chain with its last node replaced (the same id, e.g. an expanded message)."""
        if self._own:
            return NodeChain(self._ids, self._fetch, self._n, (*self._own[:-1], node),
                             mark=self.mark, positions=self._positions)
        if not self._n:
            raise IndexError("an empty chain has no last node")
        return NodeChain(self._ids, self._fetch, self._n - 1, (node,), mark=self.mark,
                         positions=self._positions)

    def __repr__(self) -> str:
        return f"NodeChain({len(self)} nodes)"


def _no_fetch(ids: list[str]) -> list[Node]:
    if ids:
        raise KeyError(ids[0])
    return []


def id_at(chain: Sequence[Node], i: int) -> str:
    """The id at position ``i`` of any chain, reading no body when it is a ``NodeChain``."""
    return chain.id_at(i) if isinstance(chain, NodeChain) else chain[i].id
