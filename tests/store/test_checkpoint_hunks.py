"""Hunks of a checkpoint's change and reverting one of them in the file as it is now."""

from __future__ import annotations

import pytest

from openprogram_lsp.core.errors import NotFound, SessionBusy
from openprogram_lsp.store.checkpoints.hunks import Hunk, hunks, revert_hunk

BEFORE = "a\nb\nc\nd\ne\nf\ng\n"
AFTER = "a\nB\nc\nd\ne\nF\nF2\ng\n"


def test_hunks_list_each_changed_run_with_unified_diff_starts() -> None:
    assert hunks(BEFORE, AFTER) == [Hunk(2, 1, 2, 1), Hunk(6, 1, 6, 2)]
    assert hunks("", "x\ny\n") == [Hunk(0, 0, 1, 2)]
    assert hunks("x\ny\n", "") == [Hunk(1, 2, 0, 0)]
    assert hunks("same\n", "same\n") == []


def test_reverting_one_hunk_leaves_the_others() -> None:
    assert revert_hunk(AFTER, BEFORE, AFTER, 0) == "a\nb\nc\nd\ne\nF\nF2\ng\n"
    assert revert_hunk(AFTER, BEFORE, AFTER, 1) == "a\nB\nc\nd\ne\nf\ng\n"


def test_pure_insertions_and_deletions_revert_in_place() -> None:
    before, after = "1\n2\n3\n", "1\nnew\n2\n3\n"
    assert revert_hunk(after, before, after, 0) == before
    before, after = "1\n2\n3\n", "1\n3\n"
    assert revert_hunk(after, before, after, 0) == before


def test_a_hunk_follows_lines_the_user_moved_down() -> None:
    current = "header\nmore\n" + AFTER
    assert revert_hunk(current, BEFORE, AFTER, 1) == "header\nmore\na\nB\nc\nd\ne\nf\ng\n"


def test_a_hunk_whose_lines_were_edited_away_does_not_apply() -> None:
    with pytest.raises(SessionBusy):
        revert_hunk("a\nX\nc\nd\ne\nF\nF2\ng\n", BEFORE, AFTER, 0)
    with pytest.raises(NotFound):
        revert_hunk(AFTER, BEFORE, AFTER, 5)


def test_line_endings_are_kept() -> None:
    before, after = "a\r\nb\r\n", "a\r\nc\r\n"
    assert revert_hunk(after, before, after, 0) == before
