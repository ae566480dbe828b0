"""Line hunks between two texts: the changed runs an approval card lists by index, and the
text that results when only some of them are applied (a per-hunk approval).

A hunk is one run of changed lines (``difflib`` opcodes with no context), so the hunks of one
pair of texts never touch and each applies on its own. Checkpoint diffs use the same runs.
"""

from __future__ import annotations

import difflib
import time
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass

MAX_HUNKED_CHARS = 2 * 1024 * 1024
"""Longest old + new text split into hunks (beyond it an edit is approved whole)."""
MAX_PAIR_WORK = 1_000_000
"""With a budget: most pairs of equal lines (old x new) one matching pass may visit; many
repeats of one line (blank lines changed all over a file) make ``difflib`` quadratic."""


class TooCostly(Exception):
    """Splitting these texts into hunks would take longer than the budget allows."""


class _Bounded(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """``SequenceMatcher`` that gives up (``TooCostly``) once past ``deadline``."""

    def __init__(self, a: list[str], b: list[str], deadline: float) -> None:
        super().__init__(None, a, b, autojunk=False)
        self.deadline = deadline

    def find_longest_match(self, alo: int = 0, ahi: int | None = None, blo: int = 0,
                           bhi: int | None = None) -> difflib.Match:
        if time.monotonic() > self.deadline:
            raise TooCostly("past the time budget")
        return super().find_longest_match(alo, ahi, blo, bhi)


@dataclass(frozen=True, slots=True)
class Span:
    """Lines ``old_start .. old_start + old_lines`` (before) became ``new_start ..`` (after),
    1-based like a unified diff; a pure insertion has ``old_lines == 0`` and ``old_start`` the
    line it follows (0 at the top), a pure deletion likewise on the new side. ``i1:i2`` and
    ``j1:j2`` are the 0-based line slices."""

    i1: int
    i2: int
    j1: int
    j2: int

    @property
    def old_start(self) -> int:
        return self.i1 + 1 if self.i2 > self.i1 else self.i1

    @property
    def old_lines(self) -> int:
        return self.i2 - self.i1

    @property
    def new_start(self) -> int:
        return self.j1 + 1 if self.j2 > self.j1 else self.j1

    @property
    def new_lines(self) -> int:
        return self.j2 - self.j1

    @property
    def header(self) -> str:
        """The unified-diff header of the hunk (``@@ -a,b +c,d @@``)."""
        return f"@@ -{self.old_start},{self.old_lines} +{self.new_start},{self.new_lines} @@"


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept, so joining them gives the text back exactly. Only
    ``\n`` ends a line (a ``\r\n`` line keeps its ``\r``), as editors number lines: a form
    feed or a lone ``\r`` inside a line must not shift the numbers an editor shows."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def opcodes(before: list[str], after: list[str], *,
            budget: float | None = None) -> list[tuple[int, int, int, int]]:
    """The changed runs between two line lists, as ``(i1, i2, j1, j2)`` slices in order.
    With ``budget`` (seconds), ``TooCostly`` instead of a longer wait."""
    if budget is None:
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    else:
        theirs = Counter(after)
        work = sum(n * theirs[line] for line, n in Counter(before).items() if line in theirs)
        if work > MAX_PAIR_WORK:
            raise TooCostly(f"{work} pairs of equal lines")
        matcher = _Bounded(before, after, time.monotonic() + budget)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def spans(before: str, after: str, *, budget: float | None = None) -> list[Span]:
    """The hunks between two texts, in file order (index = position in the list); with
    ``budget`` (seconds), ``TooCostly`` when splitting them would take longer."""
    return [Span(*op) for op in opcodes(split_lines(before), split_lines(after), budget=budget)]


def check_accepted(count: int, accepted: Collection[int]) -> str | None:
    """Why ``accepted`` cannot name hunks of an edit with ``count`` hunks (None: it can)."""
    if count == 0:
        return "acceptedHunks: this edit was not offered by hunk"
    bad = sorted(i for i in accepted if not 0 <= i < count)
    if bad:
        return f"acceptedHunks: no hunk {bad[0]} (the edit has {count}, numbered from 0)"
    if len(set(accepted)) != len(accepted):
        return "acceptedHunks: an index is listed twice"
    return None


def apply_some(before: str, after: str, accepted: Collection[int]) -> str:
    """``before`` with only the ``accepted`` hunks of before→after applied."""
    old, new = split_lines(before), split_lines(after)
    keep = set(accepted)
    out: list[str] = []
    at = 0
    for index, (i1, i2, j1, j2) in enumerate(opcodes(old, new)):
        out += old[at:i1]
        out += new[j1:j2] if index in keep else old[i1:i2]
        at = i2
    out += old[at:]
    return "".join(out)


def show(before: str, after: str, span: Span, *, max_lines: int = 40) -> str:
    """One hunk as unified-diff lines (header, ``-`` old, ``+`` new), at most ``max_lines``."""
    old, new = split_lines(before), split_lines(after)
    body = [f"-{line.rstrip(chr(10))}" for line in old[span.i1:span.i2]]
    body += [f"+{line.rstrip(chr(10))}" for line in new[span.j1:span.j2]]
    if len(body) > max_lines:
        body = [*body[:max_lines], f"[... {len(body) - max_lines} more lines]"]
    return "\n".join([span.header, *body])
