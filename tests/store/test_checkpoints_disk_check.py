"""The restore guard's in-process check of a few files against the head checkpoint: it reports
what ``git diff-files`` reports for them (never less), and leaves what it does not handle to git;
a restore of one file runs no git process and still keeps an edit the watcher never reported."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.store._cp_helpers import make_workspace, open_store

from openprogram_lsp.store.checkpoints import disk_check
from openprogram_lsp.store.checkpoints.disk_check import modified_files
from openprogram_lsp.store.checkpoints.objects import commit_tree
from openprogram_lsp.store.checkpoints.store import CheckpointStore


def check(store: CheckpointStore, paths: list[str]) -> list[str] | None:
    head = store.repo.head()
    assert head is not None
    return modified_files(store.workspace, store.repo.odb, commit_tree(store.repo, head), paths)


def diff_files(store: CheckpointStore, paths: list[str]) -> list[str]:
    """What git says, after refreshing stat data (what the git path of the guard runs)."""
    store.stager.refresh()
    return store.stager.modified(tuple(paths))


def test_edits_the_watcher_missed_are_found_like_diff_files(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    assert store.ensure_baseline("s") is not None
    files = ["src/main.py", "src/util.py", "docs/readme.md", ".gitignore"]
    assert check(store, files) == [] == diff_files(store, files)
    (ws / "src" / "main.py").write_text("print('edited')\n")  # no note: the watcher is late
    os.chmod(ws / "src" / "util.py", 0o755)  # the executable bit is recorded
    (ws / "docs" / "readme.md").unlink()
    (ws / ".gitignore").write_text("*.log\nbuild/\n")  # rewritten with the same bytes
    want = ["src/main.py", "src/util.py", "docs/readme.md"]
    assert check(store, files) == want
    assert sorted(diff_files(store, files)) == sorted(want)
    (ws / "docs" / "readme.md").mkdir()  # something else in a file's place
    assert check(store, ["docs/readme.md"]) == ["docs/readme.md"]


def test_what_it_does_not_handle_is_left_to_git(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_workspace(tmp_path, git=False)
    (ws / "link").symlink_to("src/main.py")
    (ws / "big.txt").write_text("x" * 64)
    store = open_store(ws, tmp_path / "home")
    assert store.ensure_baseline("s") is not None
    monkeypatch.setattr(disk_check, "MAX_BYTES", 16)
    for paths in (["src"], ["link"], ["nosuch.txt"], ["big.txt"],
                  [f"f{i}" for i in range(disk_check.MAX_FILES + 1)]):
        assert check(store, paths) is None, paths


def test_a_one_file_restore_runs_no_git_and_keeps_an_unreported_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    base = store.ensure_baseline("s")
    assert base is not None
    (ws / "src" / "util.py").write_text("def f():\n    return 2\n")
    store.note_paths(["src/util.py"])
    turn = store.commit_turn("s", "t1", "turn 1")
    assert turn is not None
    # main.py is the same in the head and in the baseline: restoring it writes nothing, but
    # the edit nobody reported must still be in the safety checkpoint (and so undoable)
    (ws / "src" / "main.py").write_text("print('unreported')\n")
    started: list[object] = []
    real = subprocess.Popen.__init__

    def spy(self: subprocess.Popen[bytes], *args: object, **kw: object) -> None:
        started.append(args[0])
        real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess.Popen, "__init__", spy)
    out = store.restore(base.id, ["src/util.py"])
    assert out.restored == ["src/util.py"] and started == []
    assert (ws / "src" / "util.py").read_text() == "def f():\n    return 1\n"
    out = store.restore(base.id, ["src/main.py"])  # same in head and baseline: checked on disk
    assert started == [] and out.restored == ["src/main.py"]
    assert (ws / "src" / "main.py").read_text() == "print('hello')\n"
    monkeypatch.setattr(subprocess.Popen, "__init__", real)
    safety = out.safety_checkpoint_id
    assert safety is not None
    store.restore(safety, ["src/main.py"])  # the undo gives the unreported edit back
    assert (ws / "src" / "main.py").read_text() == "print('unreported')\n"
