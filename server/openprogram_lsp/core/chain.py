"""A conversation chain whose ids are known up front and whose node bodies are read on demand.

A turn needs the whole chain's shape (positions, the ids a summary or a ContextCommit range
refers to) but only the bodies of what it renders: the tail after the last summary and a few
nodes it inspects. ``NodeChain`` gives both without a list of every node, so building the
history of a turn costs what the turn looks at, not what the session holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

from openprogram_lsp.core.types import Node

Fetch = Callable[[list[str]], list[Node]]
"""Bodies of some ids, in order."""


class NodeChain(Sequence[Node]):
    """Nodes root first: ``ids[:n]`` read through ``fetch``, then nodes held directly.

    ``ids`` may be a list another owner appends to later: only its first ``n`` entries are
    part of this chain. Never changed in place; ``plus`` and ``with_last`` return new chains.
    """

    __slots__ = ("_fetch", "_ids", "_n", "_own")

    def __init__(self, ids: Sequence[str], fetch: Fetch, n: int | None = None,
                 own: Sequence[Node] = ()) -> None:
        self._ids = ids
        self._n = len(ids) if n is None else n
        self._fetch = fetch
        self._own = tuple(own)

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
                         self._own[:max(0, n - self._n)])

    def plus(self, *nodes: Node) -> NodeChain:
        """This chain with nodes appended."""
        return NodeChain(self._ids, self._fetch, self._n, (*self._own, *nodes))

    def with_last(self, node: Node) -> NodeChain:
        """This chain with its last node replaced (the same id, e.g. an expanded message)."""
        if self._own:
            return NodeChain(self._ids, self._fetch, self._n, (*self._own[:-1], node))
        if not self._n:
            raise IndexError("an empty chain has no last node")
        return NodeChain(self._ids, self._fetch, self._n - 1, (node,))

    def __repr__(self) -> str:
        return f"NodeChain({len(self)} nodes)"


def _no_fetch(ids: list[str]) -> list[Node]:
    if ids:
        raise KeyError(ids[0])
    return []


def id_at(chain: Sequence[Node], i: int) -> str:
    """The id at position ``i`` of any chain, reading no body when it is a ``NodeChain``."""
    return chain.id_at(i) if isinstance(chain, NodeChain) else chain[i].id
