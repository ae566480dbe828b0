"""The messages of one agent loop: the prepared prompt, shared as it is, then the loop's own.

The prepared history of a long session holds tens of thousands of messages and is carried
from turn to turn (``context.prefix``). The loop appends its replies and tool results to a
``Transcript`` instead of a copy of that history, and a provider that only needs the prompt's
size reads the carried character count instead of joining every message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import overload

from openprogram_lsp.core.types import Message


class Transcript(Sequence[Message]):
    """``prefix`` (never changed) followed by the messages appended to this transcript."""

    __slots__ = ("_chars", "_prefix", "_tail")

    def __init__(self, prefix: Sequence[Message] = (), *, chars: int | None = None) -> None:
        """``chars``: the summed ``len(content)`` of ``prefix``, when known."""
        self._prefix = prefix
        self._tail: list[Message] = []
        self._chars = chars

    def append(self, message: Message) -> None:
        """Add a message at the end."""
        self._tail.append(message)

    def extend(self, messages: Iterable[Message]) -> None:
        """Add messages at the end."""
        self._tail.extend(messages)

    @property
    def added(self) -> list[Message]:
        """The messages appended after the prefix (do not modify)."""
        return self._tail

    def content_chars(self) -> int:
        """The summed length of every message's content (the prefix's from its count)."""
        if self._chars is None:
            self._chars = sum(len(m.content) for m in self._prefix)
        return self._chars + sum(len(m.content) for m in self._tail)

    def __len__(self) -> int:
        return len(self._prefix) + len(self._tail)

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> list[Message]: ...
    def __getitem__(self, i: int | slice) -> Message | list[Message]:
        if isinstance(i, slice):
            return list(self)[i]
        n = len(self._prefix)
        if i < 0:
            i += n + len(self._tail)
        if i < 0:
            raise IndexError(i)
        return self._prefix[i] if i < n else self._tail[i - n]

    def __iter__(self) -> Iterator[Message]:
        return chain(self._prefix, self._tail)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Transcript | list | tuple):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Transcript({len(self._prefix)} + {len(self._tail)} messages)"


def content_chars(messages: Sequence[Message]) -> int:
    """``len("".join(m.content for m in messages))`` without joining a carried prefix."""
    if isinstance(messages, Transcript):
        return messages.content_chars()
    return sum(len(m.content) for m in messages)


ENVIRONMENT_OPEN = "<environment>"
"""How the workspace-state note starts (``context.environment``): rendered after a user's
message, on its own lines."""


def with_environment(text: str, note: str) -> str:
    """A user's message with the environment note after it."""
    return f"{text}\n\n{note}"


def without_environment(text: str) -> str:
    """A user's message as they wrote it: any environment note after it left out."""
    head, sep, _ = text.partition(f"\n\n{ENVIRONMENT_OPEN}\n")
    return head if sep else text

