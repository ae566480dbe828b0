"""An immutable sequence that grows by appending without copying what it holds.

A session's rendering (its messages, segments, kept ids, ...) is carried from one turn to the
next and every turn adds a few items at its end or cuts one or two off. ``Chunked`` holds full
chunks of ``CHUNK`` items as tuples shared by every version built from it, and a short tail:
``plus`` and ``head`` cost O(len / CHUNK + CHUNK + added) pointer copies, never a pass over the
items, and a version once made never changes (earlier turns' preps keep theirs).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Generic, TypeVar, overload

T = TypeVar("T")

CHUNK_BITS = 8
CHUNK = 1 << CHUNK_BITS
"""Items per shared chunk."""
_MASK = CHUNK - 1


class Chunked(Sequence[T], Generic[T]):
    """Items in order: full chunks (tuples, shared between versions), then a tail tuple."""

    __slots__ = ("_chunks", "_len", "_tail")

    _chunks: tuple[tuple[T, ...], ...]
    _tail: tuple[T, ...]
    _len: int

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._chunks, self._tail, self._len = (), (), 0
        self._set(self._chunks, tuple(items))

    def _set(self, chunks: tuple[tuple[T, ...], ...], tail: tuple[T, ...]) -> None:
        if len(tail) >= CHUNK:
            full = len(tail) & ~_MASK
            chunks = chunks + tuple(tail[i:i + CHUNK] for i in range(0, full, CHUNK))
            tail = tail[full:]
        self._chunks, self._tail = chunks, tail
        self._len = (len(chunks) << CHUNK_BITS) + len(tail)

    @classmethod
    def _of(cls, chunks: tuple[tuple[T, ...], ...], tail: tuple[T, ...]) -> Chunked[T]:
        out: Chunked[T] = cls.__new__(cls)
        out._set(chunks, tail)
        return out

    def plus(self, items: Iterable[T]) -> Chunked[T]:
        """A new version with ``items`` appended (this one is unchanged)."""
        more = tuple(items)
        if not more:
            return self
        return self._of(self._chunks, self._tail + more)

    def head(self, n: int) -> Chunked[T]:
        """A version holding the first ``n`` items."""
        if n >= self._len:
            return self
        if n <= 0:
            return self._of((), ())
        q, r = n >> CHUNK_BITS, n & _MASK
        if q == len(self._chunks):
            return self._of(self._chunks, self._tail[:r])
        return self._of(self._chunks[:q], self._chunks[q][:r])

    def replaced(self, items: Mapping[int, T]) -> Chunked[T]:
        """A new version with the item at each index given replaced: only the chunks holding
        one are copied (every other chunk is still shared)."""
        if not items:
            return self
        chunks = list(self._chunks)
        tail = list(self._tail)
        copied: dict[int, list[T]] = {}
        full = len(chunks)
        for i, value in items.items():
            if not 0 <= i < self._len:
                raise IndexError(i)
            q = i >> CHUNK_BITS
            if q == full:
                tail[i & _MASK] = value
                continue
            chunk = copied.get(q)
            if chunk is None:
                chunk = copied[q] = list(chunks[q])
            chunk[i & _MASK] = value
        for q, chunk in copied.items():
            chunks[q] = tuple(chunk)
        return self._of(tuple(chunks), tuple(tail))

    def chunks(self) -> tuple[tuple[T, ...], ...]:
        """The full chunks (of ``CHUNK`` items each, shared between versions)."""
        return self._chunks

    @property
    def tail(self) -> tuple[T, ...]:
        """The items after the last full chunk."""
        return self._tail

    def same_prefix(self, other: Chunked[T], limit: int) -> int:
        """How many leading items, up to ``limit``, are the very objects ``other`` holds
        there (a shared chunk counts whole: O(len / CHUNK + CHUNK))."""
        limit = min(limit, self._len, other._len)
        mine, theirs = self._chunks, other._chunks
        q = 0
        while (q + 1) << CHUNK_BITS <= limit and q < len(mine) and q < len(theirs) \
                and mine[q] is theirs[q]:
            q += 1
        i = q << CHUNK_BITS
        while i < limit and self[i] is other[i]:
            i += 1
        return i

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._len)
            if step == 1 and start == 0:
                return list(self.head(stop))
            return [self[k] for k in range(start, stop, step)]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(i)
        q = i >> CHUNK_BITS
        if q < len(self._chunks):
            return self._chunks[q][i & _MASK]
        return self._tail[i & _MASK]

    @property
    def last(self) -> T:
        """The last item (IndexError when empty)."""
        if self._tail:
            return self._tail[-1]
        if self._chunks:
            return self._chunks[-1][-1]
        raise IndexError("empty")

    def __iter__(self) -> Iterator[T]:
        return chain(chain.from_iterable(self._chunks), self._tail)

    def __reversed__(self) -> Iterator[T]:
        yield from reversed(self._tail)
        for chunk in reversed(self._chunks):
            yield from reversed(chunk)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Chunked | list | tuple):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Chunked({self._len} items)"


def chunked(items: Sequence[T] | Chunked[T]) -> Chunked[T]:
    """``items`` as a ``Chunked`` (as it is when it already is one)."""
    return items if isinstance(items, Chunked) else Chunked(items)

