"""Exact undo: restore and its undo reproduce every file's full mode, and a restore's undo
point outlives retention as long as the restore checkpoint does."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.store._cp_helpers import make_workspace, open_store

from openprogram_lsp.core.fsutil import current_umask


def _perm(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_restore_and_undo_keep_a_private_files_mode(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    secret = ws / "secret.env"
    secret.write_text("KEY=one\n")
    secret.chmod(0o600)
    base = store.ensure_baseline("s")
    assert base is not None
    secret.write_text("KEY=two\n")  # the agent's edit keeps the file private
    store.note_paths(["secret.env"])
    turn = store.commit_turn("s", "t1", "m")
    assert turn is not None and _perm(secret) == 0o600
    out = store.restore(base.id)
    assert secret.read_text() == "KEY=one\n" and _perm(secret) == 0o600
    store.restore(out.safety_checkpoint_id)  # undo
    assert secret.read_text() == "KEY=two\n" and _perm(secret) == 0o600


def test_a_mode_only_change_is_recorded_and_restored(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    tool = ws / "tool.sh"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o750)
    base = store.ensure_baseline("s")
    assert base is not None
    tool.chmod(0o700)  # git sees no change: same content, still executable
    store.note_paths(["tool.sh"])
    cp = store.commit_turn("s", "t1", "m")
    assert cp is not None and [f.path for f in cp.files] == ["tool.sh"]
    store.restore(base.id)
    assert _perm(tool) == 0o750
    store.restore(cp.id)
    assert _perm(tool) == 0o700


def test_modes_survive_a_walk_and_a_restart(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=True)
    home = tmp_path / "home"
    store = open_store(ws, home)
    (ws / "docs" / "readme.md").chmod(0o640)
    base = store.ensure_baseline("s")  # the first checkpoint walks
    assert base is not None
    (ws / "docs" / "readme.md").chmod(0o666 & ~current_umask())
    (ws / "docs" / "readme.md").write_text("changed\n")
    store.note_all()  # a shell command
    assert store.commit_turn("s", "t1", "m") is not None
    open_store(ws, home).restore(base.id)  # another process
    assert _perm(ws / "docs" / "readme.md") == 0o640
    assert (ws / "docs" / "readme.md").read_text() == "# Project\n"
    assert os.access(ws / "src" / "main.py", os.R_OK)


def test_undo_outlives_retention(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home", max_count=3)
    base = store.ensure_baseline("s")
    assert base is not None
    notes = ws / "notes.txt"
    notes.write_text("agent\n")
    store.note_paths(["notes.txt"])
    first = store.commit_turn("s", "t0", "m")
    assert first is not None
    notes.write_text("my own edit before the restore\n")
    store.note_paths(["notes.txt"])
    out = store.restore(base.id)
    assert not notes.exists()
    referenced = {first.id}
    for i in range(4):  # four more turns with a limit of three
        (ws / f"f{i}.txt").write_text(f"{i}\n")
        store.note_paths([f"f{i}.txt"])
        cp = store.commit_turn("s", f"t{i + 1}", "m")
        assert cp is not None
        referenced.add(cp.id)
        store.prune_if_due(keep_ids=referenced)
    kinds = {c.id: c.kind for c in store.list()}
    assert out.checkpoint_id in kinds and out.safety_checkpoint_id in kinds
    store.restore(out.safety_checkpoint_id)  # the undo still works
    assert notes.read_text() == "my own edit before the restore\n"
