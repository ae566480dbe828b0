"""Hunks of a checkpoint's change (git's zero-context patch) and reverting one of them in the
file as it is now."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store._cp_helpers import make_workspace, open_store

from openprogram_lsp.core.errors import NotFound, SessionBusy
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.checkpoints.hunks import Hunk, revert_hunk, zero_context_hunks

BEFORE = "a\nb\nc\nd\ne\nf\ng\n"
AFTER = "a\nB\nc\nd\ne\nF\nF2\ng\n"


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    store = open_store(make_workspace(tmp_path, git=False), tmp_path / "home")
    store.ensure_baseline("s")
    return store


def _change(store: CheckpointStore, before: str, after: str, name: str = "f.txt") -> list[Hunk]:
    """The hunks the checkpoint diff lists for ``name`` going from ``before`` to ``after``."""
    (store.workspace / name).write_text(before)
    store.note_paths([name])
    store.commit_turn("s", f"t-{len(before)}-a", "before")
    (store.workspace / name).write_text(after)
    store.note_paths([name])
    cp = store.commit_turn("s", f"t-{len(after)}-b", "after")
    assert cp is not None
    files = store.diff(cp.id, name).files
    return files[0].hunks or [] if files else []


def test_hunks_list_each_changed_run_with_unified_diff_starts(store: CheckpointStore) -> None:
    assert _change(store, BEFORE, AFTER) == [Hunk(2, 1, 2, 1), Hunk(6, 1, 6, 2)]
    assert _change(store, "", "x\ny\n", "new.txt") == [Hunk(0, 0, 1, 2)]
    assert _change(store, "x\ny\n", "", "gone.txt") == [Hunk(1, 2, 0, 0)]
    assert _change(store, "a\r\nb", "a\r\nc", "crlf.txt") == [Hunk(2, 1, 2, 1)]


def test_names_git_would_quote_still_get_their_hunks(store: CheckpointStore) -> None:
    assert _change(store, "1\n", "2\n", 'we "ird"\tname\u00e9.txt') == [Hunk(1, 1, 1, 1)]


@pytest.mark.timeout(120)  # a hang guard: difflib (autojunk off) took 38 s on 1,400 such
def test_many_repeated_lines_are_split(store: CheckpointStore) -> None:  # lines, and > 2 min here
    before = "".join("x\n" if i % 2 else "\n" for i in range(20_000))
    after = "".join("x\n" if i % 3 else "\n" for i in range(20_000))
    listed = _change(store, before, after)
    # the hunks are an exact decomposition: putting every hunk's old lines back gives the old text
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    rebuilt, at = [], 0
    for hunk in listed:
        j1 = hunk.new_start - 1 if hunk.new_lines else hunk.new_start
        i1 = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        rebuilt += new[at:j1] + old[i1:i1 + hunk.old_lines]
        at = j1 + hunk.new_lines
    assert "".join(rebuilt + new[at:]) == before
    # and the first and last revert on their own
    for hunk in (listed[0], listed[-1]):
        j1 = hunk.new_start - 1 if hunk.new_lines else hunk.new_start
        i1 = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        want = new[:j1] + old[i1:i1 + hunk.old_lines] + new[j1 + hunk.new_lines:]
        assert revert_hunk(after, before, after, hunk) == "".join(want)


def test_zero_context_patch_files_are_told_apart_by_blob_ids() -> None:
    a, b, c = "1" * 40, "2" * 40, "0" * 40
    patch = (f"diff --git a/x b/x\nindex {a}..{b} 100644\n--- a/x\n+++ b/x\n@@ -3 +3,2 @@\n-o\n"
             f"+n\n+m\ndiff --git a/m b/m\nold mode 100644\nnew mode 100755\n"
             f"diff --git a/y b/y\nnew file mode 100644\nindex {c}..{a}\n--- /dev/null\n"
             "+++ b/y\n@@ -0,0 +1 @@\n+@@ -9 +9 @@\n").encode()
    assert zero_context_hunks(patch) == {(a, b): [Hunk(3, 1, 3, 2)], (c, a): [Hunk(0, 0, 1, 1)]}


def test_reverting_one_hunk_leaves_the_others() -> None:
    assert revert_hunk(AFTER, BEFORE, AFTER, Hunk(2, 1, 2, 1)) == "a\nb\nc\nd\ne\nF\nF2\ng\n"
    assert revert_hunk(AFTER, BEFORE, AFTER, Hunk(6, 1, 6, 2)) == "a\nB\nc\nd\ne\nf\ng\n"


def test_pure_insertions_and_deletions_revert_in_place() -> None:
    before, after = "1\n2\n3\n", "1\nnew\n2\n3\n"
    assert revert_hunk(after, before, after, Hunk(1, 0, 2, 1)) == before
    before, after = "1\n2\n3\n", "1\n3\n"
    assert revert_hunk(after, before, after, Hunk(2, 1, 1, 0)) == before


def test_a_hunk_follows_lines_the_user_moved_down() -> None:
    current = "header\nmore\n" + AFTER
    assert revert_hunk(current, BEFORE, AFTER, Hunk(6, 1, 6, 2)) == \
        "header\nmore\na\nB\nc\nd\ne\nf\ng\n"


def test_a_hunk_whose_lines_were_edited_away_does_not_apply() -> None:
    with pytest.raises(SessionBusy):
        revert_hunk("a\nX\nc\nd\ne\nF\nF2\ng\n", BEFORE, AFTER, Hunk(2, 1, 2, 1))
    with pytest.raises(SessionBusy):  # the block is now in two places: nothing is guessed
        revert_hunk("z\n" + "a\nB\nc\n" * 2, BEFORE, AFTER, Hunk(2, 1, 2, 1))
    with pytest.raises(NotFound):
        revert_hunk(AFTER, BEFORE, AFTER, Hunk(40, 1, 40, 1))


def test_line_endings_are_kept() -> None:
    before, after = "a\r\nb\r\n", "a\r\nc\r\n"
    assert revert_hunk(after, before, after, Hunk(2, 1, 2, 1)) == before


def test_restore_hunk_names_a_missing_index(store: CheckpointStore) -> None:
    _change(store, BEFORE, AFTER)
    cp = store.list()[0]
    with pytest.raises(NotFound, match="no hunk 5"):
        store.restore_hunk(cp.id, "f.txt", 5)
