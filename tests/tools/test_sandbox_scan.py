"""The look for repositories and control files below the workspace root (tools.sandbox_scan):
depth, skips, caps, and a kept listing that a command cannot make stale by setting a
directory's mtime back. The real box is tests/tools/test_sandbox.py's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openprogram_lsp.tools import sandbox_scan
from openprogram_lsp.tools.sandbox_scan import made_note, nested_controls


def _rel(ws: Path, paths: tuple[str, ...]) -> list[str]:
    return sorted(os.path.relpath(p, ws) for p in paths)


def test_found_to_three_levels_not_into_skipped_or_linked_directories(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for d in (".git", ".vscode/x", "p/.git", "a/b/c/.claude", "a/b/c/d", "node_modules/m/.git",
              "p2/sub/.VSCode", "z/.git/inner"):
        (ws / d).mkdir(parents=True)
    (ws / "a" / "b" / ".envrc").write_text("x")
    (ws / "a" / "b" / "c" / "d" / ".envrc").write_text("four levels down")
    (ws / "linked").symlink_to(tmp_path)  # a symlinked directory is not entered
    (tmp_path / ".git").mkdir()
    (ws / "w").mkdir()
    (ws / "w" / ".git").write_text("gitdir: ../.git/worktrees/w\n")  # a linked worktree's
    found = nested_controls(str(ws))
    assert _rel(ws, found.paths) == ["a/b/.envrc", "a/b/c/.claude", "p/.git", "p2/sub/.VSCode",
                                     "w/.git", "z/.git"]
    assert not found.partial


def test_a_listing_is_read_again_when_its_ctime_moved_whatever_its_mtime(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_scan, "RACY_NS", -1)  # keep every listing at once
    monkeypatch.setattr(sandbox_scan, "_cache", {})
    ws = tmp_path / "ws"
    (ws / "proj").mkdir(parents=True)
    st = os.stat(ws / "proj")
    before = nested_controls(str(ws))
    assert before.paths == () and str(ws / "proj") in sandbox_scan._cache
    (ws / "proj" / ".git").mkdir()
    os.utime(ws / "proj", ns=(st.st_atime_ns, st.st_mtime_ns))  # the mtime set back
    after = nested_controls(str(ws))
    assert _rel(ws, after.paths) == ["proj/.git"]
    assert "proj/.git (a git repository" in made_note(str(ws), before, after)


def test_a_copy_where_the_original_was_is_named(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "p" / ".git").mkdir(parents=True)
    before = nested_controls(str(ws))
    os.rename(ws / "p", ws / "p2")
    (ws / "p" / ".git").mkdir(parents=True)
    note = made_note(str(ws), before, nested_controls(str(ws)))
    assert "p/.git (a git" in note and "p2/.git (a git" in note
    assert made_note(str(ws), before, before) == ""


def test_the_look_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    for i in range(12):
        (ws / f"d{i:02}" / ".git").mkdir(parents=True)
    monkeypatch.setattr(sandbox_scan, "MAX_DIRS", 5)
    cut = nested_controls(str(ws))
    assert cut.partial and len(cut.paths) == 4  # the root and four of its directories read
    monkeypatch.setattr(sandbox_scan, "MAX_DIRS", 100)
    monkeypatch.setattr(sandbox_scan, "MAX_FOUND", 3)
    capped = nested_controls(str(ws))
    assert capped.partial and len(capped.paths) == 3


def test_our_own_state_in_the_workspace_is_not_looked_into(tmp_path: Path) -> None:
    from openprogram_lsp.store.session_store import SessionStore

    ws = tmp_path / "ws"
    state = ws / "state"
    SessionStore(state)  # registers its directories as ours (hidden in the box)
    (state / "sessions" / "s1" / ".git").mkdir(parents=True)  # a session's own repository
    (ws / "p" / ".git").mkdir(parents=True)
    assert _rel(ws, nested_controls(str(ws)).paths) == ["p/.git"]


def test_what_a_look_found_stays_found_when_a_flood_cuts_the_next_one_short(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    (ws / "proj" / ".git").mkdir(parents=True)
    monkeypatch.setattr(sandbox_scan, "MAX_DIRS", 20)
    assert _rel(ws, nested_controls(str(ws)).paths) == ["proj/.git"]
    for i in range(40):  # a command's flood, sorted before the project
        (ws / f"a{i:03}").mkdir()
    cut = nested_controls(str(ws))
    assert cut.partial and _rel(ws, cut.paths) == ["proj/.git"]
    (ws / "proj" / ".git").rmdir()  # gone: no longer held
    assert nested_controls(str(ws)).paths == ()



async def test_a_look_cut_short_is_said_in_the_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real bubblewrap: a workspace too large to look through says so."""
    from openprogram_lsp.tools.base import ToolContext
    from openprogram_lsp.tools.builtin.command import RunCommand
    from openprogram_lsp.tools.sandbox import PARTIAL

    ws = tmp_path / "ws"
    for i in range(6):
        (ws / f"d{i}").mkdir(parents=True)
    tool = RunCommand()
    ctx = ToolContext(workspace=ws)
    whole = await tool.run(tool.parse({"command": "true"}), ctx)
    assert whole.data["sandboxed"] is True and PARTIAL not in whole.text, whole.text
    monkeypatch.setattr(sandbox_scan, "MAX_DIRS", 3)
    cut = await tool.run(tool.parse({"command": "true"}), ctx)
    assert cut.text.endswith(PARTIAL), cut.text
