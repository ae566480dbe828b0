"""``messagesDigest``: a SHA-256 of the messages a turn sent, defined over groups of messages.

Version 2 (ContextCommit ``version`` 2): the messages are cut into consecutive groups of
``GROUP`` (256, the chunk size of ``core.chunked``) from the first one, the last group holding
the rest (0 to 255 messages); each group is hashed as version 1 hashes the whole list (every
message's wire JSON with sorted keys, then a newline) and the digest is the SHA-256 of the
groups' 32-byte digests in order. So a turn that changes a message in the middle of the prompt
(an old tool result cleared after an idle gap) hashes that message's group and the list of
group digests again, not every message. Version 1 (ContextCommits written before it): one
SHA-256 over every message's line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from openprogram_lsp.core.chunked import CHUNK, CHUNK_BITS, Chunked
from openprogram_lsp.core.types import Message

GROUP = CHUNK
"""Messages per hashed group."""
DIGEST_VERSION = 2
_MASK = GROUP - 1


def _line(m: Message) -> bytes:
    return json.dumps(m.wire(), sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"


def _group(messages: Iterable[Message]) -> Any:
    h = hashlib.sha256()
    for m in messages:
        h.update(_line(m))
    return h


class DigestState:
    """The version 2 digest of a list of messages, able to go on as messages are appended:
    the finished groups' digests (shared between copies) and a SHA-256 of the open group."""

    __slots__ = ("count", "groups", "open")

    def __init__(self, groups: Chunked[bytes] | None = None, open_: Any = None,
                 count: int = 0) -> None:
        self.groups: Chunked[bytes] = groups if groups is not None else Chunked()
        self.open: Any = open_ if open_ is not None else hashlib.sha256()
        self.count = count

    def copy(self) -> DigestState:
        """An independent state (the finished groups are shared: they never change)."""
        return DigestState(self.groups, self.open.copy(), self.count)

    def update(self, messages: Iterable[Message]) -> None:
        """Append messages."""
        done: list[bytes] = []
        h, count = self.open, self.count
        for m in messages:
            h.update(_line(m))
            count += 1
            if not count & _MASK:
                done.append(h.digest())
                h = hashlib.sha256()
        self.open, self.count = h, count
        if done:
            self.groups = self.groups.plus(done)

    def cut(self, messages: Sequence[Message], n: int) -> DigestState:
        """The state of ``messages[:n]``, given that this state's messages begin with those:
        the groups before ``n`` are kept, at most ``GROUP - 1`` messages hashed again."""
        if n == self.count:
            return self.copy()
        full = n >> CHUNK_BITS
        return DigestState(self.groups.head(full),
                           _group(messages[k] for k in range(full << CHUNK_BITS, n)), n)

    def hexdigest(self) -> str:
        """The digest of the messages so far."""
        h = hashlib.sha256(b"".join(self.groups))
        h.update(self.open.digest())
        return h.hexdigest()


def state_of(messages: Chunked[Message], like: Chunked[Message], like_state: DigestState,
             cache: dict[int, tuple[tuple[Message, ...], bytes]]) -> DigestState:
    """The state of ``messages`` where most of its chunks are ``like``'s (whose state is
    ``like_state``): a chunk that is the very object ``like`` holds, or the one ``cache``
    holds for that index, is not hashed again. ``cache`` is filled with the others."""
    theirs = like.chunks()
    done: list[bytes] = []
    for q, chunk in enumerate(messages.chunks()):
        if q < len(theirs) and chunk is theirs[q]:
            done.append(like_state.groups[q])
            continue
        hit = cache.get(q)
        if hit is None or hit[0] is not chunk:
            hit = cache[q] = (chunk, _group(chunk).digest())
        done.append(hit[1])
    tail = messages.tail
    other = like.tail
    if len(tail) == len(other) and len(theirs) == len(messages.chunks()) \
            and all(a is b for a, b in zip(tail, other, strict=True)):
        open_ = like_state.open.copy()
    else:
        open_ = _group(tail)
    return DigestState(Chunked(done), open_, len(messages))


def messages_digest(messages: Iterable[Message], version: int = DIGEST_VERSION) -> str:
    """The digest of ``messages`` as a ContextCommit of ``version`` records it."""
    if version < 2:
        return str(_group(messages).hexdigest())
    state = DigestState()
    state.update(messages)
    return state.hexdigest()
