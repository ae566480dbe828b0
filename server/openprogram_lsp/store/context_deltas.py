"""A ContextCommit's ``replaced`` and ``protected`` lists stored as a change from an earlier one.

After an idle gap every turn's record names every cleared and every referenced tool result,
which mostly are the previous turn's. From ContextCommit version 3 the store writes them
as a delta against the record of the nearest earlier turn on the same chain (an ancestor's
record, immutable like every record): ``listsBase`` (that turn's id), ``listsDepth`` (1
when the base is a full record), ``replacedDrop``/``protectedDrop`` (indexes dropped from the
base's list) and ``replacedAdd``/``protectedAdd`` (``[index, key]`` put in, ascending, indexes
in the new list), empty ones left out, and ``listsDigest``: a digest chained along the line,
of the full record's lists first, then of each delta on the one before, so a turn that
changed little hashes little. A record is full, as before, when the lists are short, when
the base is not at hand (no record of the previous turn, one that cannot be read back), at
every ``FULL_EVERY``-th record of a line of deltas, or when a delta would be no smaller.
Reading one follows its bases (at most ``FULL_EVERY`` records, all ancestors of the turn, so
a fork reads its own line) and checks the digests: a missing or damaged base gives ``None``
for the lists and ``listsUnresolved``, never other lists. ``docs/decisions/context-deltas.md``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any

LISTS = ("replaced", "protected")
FULL_EVERY = 64
"""A line of deltas ends after this many records (the next is full): what a read follows."""
SHORT = 8
"""Lists of at most this many keys in all are written in full (a delta would be no smaller)."""
DELTA_FIELDS = ("listsBase", "listsDepth", "listsDigest", "replacedDrop", "replacedAdd",
                "protectedDrop", "protectedAdd")
_CHANGES = ("replacedDrop", "replacedAdd", "protectedDrop", "protectedAdd")

Delta = tuple[list[int], list[list[Any]]]


@dataclass(slots=True)
class Lists:
    """One written record's lists as they read back: the base the next record may use."""

    turn_id: str
    replaced: list[str]
    protected: list[str]
    depth: int  # 0: written in full
    digest: str | None = None  # worked out when first needed (a full record's)

    def digest_of(self) -> str:
        """The record's ``listsDigest`` (a full record's: of its lists, kept once made)."""
        if self.digest is None:
            self.digest = lists_digest(self.replaced, self.protected)
        return self.digest


def _hex(data: str) -> str:
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def lists_digest(replaced: Sequence[str], protected: Sequence[str]) -> str:
    """The digest a line starts from: SHA-256 (first 128 bits, hex) of the two lists as one
    compact JSON array."""
    return _hex(json.dumps([list(replaced), list(protected)], separators=(",", ":")))


def chained_digest(base: str, record: dict[str, Any]) -> str:
    """A delta record's digest: of its base's digest and its four changes (absent: [])."""
    return _hex(base + json.dumps([record.get(k) or [] for k in _CHANGES],
                                  separators=(",", ":")))


def str_list(value: object) -> list[str] | None:
    """``value`` when it is a list of strings, else None."""
    if type(value) is not list:
        return None
    try:
        "".join(value)  # a TypeError for any item that is not a string (checked in C)
    except TypeError:
        return None
    return value


def diff(old: list[str], new: list[str]) -> Delta | None:
    """The indexes of ``old`` to drop and the ``[index, key]`` to put in so that ``apply``
    gives ``new``, or None when no small such change is found (a reordering, a key whose
    count changed, more changes than half of ``new``)."""
    if new == old:
        return [], []
    n, m = len(old), len(new)
    if n < m and new[:n] == old:  # keys added at the end only (results newly cleared)
        return [], [[i, new[i]] for i in range(n, m)]
    before, after = set(old), set(new)
    gone, came = before - after, after - before
    if len(gone) + len(came) > len(new) // 2:
        return None
    drop = _where(old, gone)
    add = [[i, new[i]] for i in _where(new, came)]
    try:
        if apply(old, drop, add) != new:
            return None
    except ValueError:
        return None
    return drop, add


def _where(items: list[str], keys: set[str]) -> list[int]:
    """The indexes of ``items`` holding one of ``keys`` (a few: each key's first, found in C;
    a repeated one shows in the check of the result)."""
    if len(keys) <= 16:
        return sorted(items.index(k) for k in keys)
    return list(compress(range(len(items)), map(keys.__contains__, items)))


def apply(old: list[str], drop: Sequence[Any], add: Sequence[Any]) -> list[str]:
    """``old`` without the indexes in ``drop`` and with each ``[index, key]`` of ``add`` put
    in at ``index`` of the result; ValueError for a malformed or out-of-range change."""
    if drop:
        keep = [True] * len(old)
        last = -1
        for i in drop:
            if type(i) is not int or not last < i < len(old):
                raise ValueError(f"bad drop index {i!r}")
            keep[i] = False
            last = i
        rest = list(compress(old, keep))
    else:
        rest = list(old)
    if not add:
        return rest
    out: list[str] = []
    src = 0
    for item in add:
        if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int
                and isinstance(item[1], str)):
            raise ValueError(f"bad added item {item!r}")
        take = item[0] - len(out)
        if take < 0 or src + take > len(rest):
            raise ValueError(f"bad added index {item[0]!r}")
        out.extend(rest[src:src + take])
        src += take
        out.append(item[1])
    out.extend(rest[src:])
    return out


def encode(stored: dict[str, Any], turn_id: str, base: Lists | None) -> Lists | None:
    """Turn ``stored`` (a record about to be written, its lists in full) into a delta
    against ``base`` when that is worth it, in place; the lists as the next record's base
    (None, the record left as it is, when it lacks them or they are not lists of strings)."""
    replaced, protected = str_list(stored.get("replaced")), str_list(stored.get("protected"))
    if replaced is None or protected is None:
        return None
    new = Lists(turn_id, list(replaced), list(protected), 0)
    if base is None or base.depth + 1 >= FULL_EVERY or len(replaced) + len(protected) <= SHORT:
        return new
    kept, cited = diff(base.replaced, new.replaced), diff(base.protected, new.protected)
    if kept is None or cited is None:
        return new
    changes = len(kept[0]) + len(kept[1]) + len(cited[0]) + len(cited[1])
    if changes * 2 > len(replaced) + len(protected):
        return new
    del stored["replaced"], stored["protected"]
    for key, (drop, add) in (("replaced", kept), ("protected", cited)):
        if drop:
            stored[f"{key}Drop"] = drop
        if add:
            stored[f"{key}Add"] = add
    new.depth = base.depth + 1
    new.digest = chained_digest(base.digest_of(), stored)
    stored.update(listsBase=base.turn_id, listsDepth=new.depth, listsDigest=new.digest)
    return new


def resolve(data: dict[str, Any], load: Callable[[str], dict[str, Any] | None],
            turn_id: str = "") -> Lists | None:
    """Put a read record's lists back in full, in place, following its bases (``load``: a
    turn's record as stored, None when missing or unreadable). A record that is not a delta
    is left as it is; one whose bases cannot be followed, or whose lists do not match its
    digest, gets None for both lists and ``listsUnresolved`` saying why. Returns the lists
    (None for a record without them, or unresolved)."""
    if "listsBase" not in data:
        replaced, protected = str_list(data.get("replaced")), str_list(data.get("protected"))
        if replaced is None or protected is None:
            return None
        return Lists(turn_id, replaced, protected, 0)
    line = [data]
    why = ""
    cur = data
    while "listsBase" in cur:
        base_id = cur.get("listsBase")
        depth = cur.get("listsDepth")
        if not isinstance(base_id, str) or type(depth) is not int or not 0 < depth < FULL_EVERY \
                or len(line) > FULL_EVERY:
            why = "a malformed delta"
            break
        base = load(base_id)
        if base is None:
            why = f"its base, the record of {base_id}, is missing or unreadable"
            break
        if "listsBase" in base and base.get("listsDepth") != depth - 1:
            why = f"its base, the record of {base_id}, is not the delta it should be"
            break
        line.append(base)
        cur = base
    lists: Lists | None = None
    if not why:
        replaced, protected = str_list(cur.get("replaced")), str_list(cur.get("protected"))
        if replaced is None or protected is None:
            why = "the full record its deltas start from lacks the lists"
        else:
            digest = lists_digest(replaced, protected)
            try:
                for rec in reversed(line[:-1]):
                    replaced = apply(replaced, rec.get("replacedDrop") or [],
                                     rec.get("replacedAdd") or [])
                    protected = apply(protected, rec.get("protectedDrop") or [],
                                      rec.get("protectedAdd") or [])
                    digest = chained_digest(digest, rec)
                    if digest != rec.get("listsDigest"):
                        raise ValueError("a record on its line does not match its digest")
            except (ValueError, TypeError) as exc:
                why = f"a delta on its line does not apply ({exc})"
            else:
                lists = Lists(turn_id, replaced, protected, data["listsDepth"], digest)
    for key in DELTA_FIELDS:
        data.pop(key, None)
    if lists is None:
        data.update(replaced=None, protected=None, listsUnresolved=why)
        return None
    data.update(replaced=lists.replaced, protected=lists.protected)
    return lists
