"""Line hunks and applying some of them (the per-hunk approval's arithmetic)."""

from __future__ import annotations

import itertools
import random

import pytest

from openprogram_lsp.core.text_hunks import TooCostly, apply_some, check_accepted, show, spans
from openprogram_lsp.core.types import DiffPreview
from openprogram_lsp.tools.approved_edit import preview_hunks


def _texts(rng: random.Random) -> tuple[str, str]:
    words = ["a\n", "b\n", "c\n", "d\n", "e", "\n"]
    before = "".join(rng.choice(words) for _ in range(rng.randrange(0, 12)))
    after = "".join(rng.choice(words) for _ in range(rng.randrange(0, 12)))
    return before, after


def test_any_subset_of_hunks_applies_each_hunk_alone() -> None:
    rng = random.Random(7)
    for _ in range(300):
        before, after = _texts(rng)
        parts = spans(before, after)
        n = len(parts)
        assert apply_some(before, after, []) == before
        assert apply_some(before, after, range(n)) == after
        for k in range(n):
            for subset in itertools.combinations(range(n), k):
                got = apply_some(before, after, subset).splitlines(keepends=True)
                # the result's own hunks against the old text are exactly the accepted ones
                mine = spans(before, "".join(got))
                assert len(mine) == len(subset)


def test_hunks_carry_unified_diff_positions() -> None:
    parts = spans("a\nb\nc\n", "a\nB\nc\nd\n")
    assert [p.header for p in parts] == ["@@ -2,1 +2,1 @@", "@@ -3,0 +4,1 @@"]
    assert show("a\nb\nc\n", "a\nB\nc\nd\n", parts[0]) == "@@ -2,1 +2,1 @@\n-b\n+B"


def test_accepted_indices_are_checked() -> None:
    assert check_accepted(3, [0, 2]) is None
    assert check_accepted(3, []) is None
    assert "no hunk 3" in (check_accepted(3, [3]) or "")
    assert "twice" in (check_accepted(3, [1, 1]) or "")
    assert "not offered by hunk" in (check_accepted(0, [0]) or "")


def test_only_newline_ends_a_line() -> None:
    # a form feed, a lone CR or U+2028 inside a line must not shift the line numbers editors show
    before = "a\fb\nc\rd\ne\u2028f\nlast"
    after = before.replace("e\u2028f", "E")
    [span] = spans(before, after)
    assert (span.old_start, span.old_lines, span.new_start, span.new_lines) == (3, 1, 3, 1)
    assert apply_some(before, after, [0]) == after
    assert spans("x\r\ny\r\n", "x\r\nY\r\n")[0].header == "@@ -2,1 +2,1 @@"


def test_a_budget_gives_up_instead_of_waiting() -> None:
    # many repeats of one line changed all over make difflib quadratic: refused up front
    dup = ["x\n"] * 3000
    changed = ["y\n" if i % 3 == 0 else line for i, line in enumerate(dup)]
    with pytest.raises(TooCostly):
        spans("".join(dup), "".join(changed), budget=1.0)
    # past the deadline: refused on the next matching step (a spent budget)
    with pytest.raises(TooCostly):
        spans("a\nb\nc\n", "a\nB\nc\n", budget=-1.0)
    assert len(spans("a\nb\nc\n", "a\nB\nc\n", budget=5.0)) == 1
    # an approval card then lists no hunks: the edit can only be approved whole
    diff = DiffPreview(path="a", old_text="".join(dup), new_text="".join(changed))
    assert preview_hunks(diff) is None
