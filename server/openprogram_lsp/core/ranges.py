"""Node id lists as runs of chain positions, so a record's size does not grow with the session.

A node's position on a chain is its depth from the root, which never changes (predecessors are
immutable), so ``[first, last]`` runs stay valid for every later chain through those nodes.
Ids with no position (a summary node, which is off the chain) are kept as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Ranges = list[str | list[int]]


def encode_ranges(ids: Iterable[str], pos: Mapping[str, int]) -> Ranges:
    """Ids as runs of consecutive chain positions (``[first, last]``); others stay ids."""
    out: Ranges = []
    for nid in ids:
        at = pos.get(nid)
        last = out[-1] if out else None
        if at is None:
            out.append(nid)
        elif isinstance(last, list) and last[1] + 1 == at:
            last[1] = at
        else:
            out.append([at, at])
    return out


def decode_ranges(items: Iterable[Any], chain: Sequence[str]) -> list[str]:
    """The ids ``encode_ranges`` stored, read back against the same chain (ids root first)."""
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        else:
            out.extend(chain[item[0]:item[1] + 1])
    return out


def count_ranges(items: Iterable[Any]) -> int:
    """How many ids the ranges stand for."""
    return sum(1 if isinstance(i, str) else i[1] - i[0] + 1 for i in items)
