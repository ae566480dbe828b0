"""The one confinement check: workspace, .git, and our own state directories."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import WorkspaceEscape
from openprogram_lsp.store.session_store import SessionStore
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin.files import ListDir, ListDirInput
from openprogram_lsp.tools.paths import is_protected, resolve_in_workspace


def test_a_state_root_inside_the_workspace_is_refused_like_git(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    ws = tmp_path / "user"
    home = ws / ".local" / "share" / "openprogram-lsp"
    monkeypatch.setenv("OPENPROGRAM_HOME", str(home))
    SessionStore(home)
    for path in (".local/share/openprogram-lsp", ".local/share/openprogram-lsp/rules/x.json",
                 ".local/share/openprogram-lsp/sessions/s1/meta.json"):
        with pytest.raises(WorkspaceEscape, match="own state directory"):
            resolve_in_workspace(ws, path)
    assert resolve_in_workspace(ws, ".local/share/other.txt") == (
        ws / ".local/share/other.txt").resolve()
    (ws / "link").symlink_to(home / "sessions")
    with pytest.raises(WorkspaceEscape, match="own state directory"):
        resolve_in_workspace(ws, "link/s1")  # through a link, too
    out = asyncio.run(ListDir().run(ListDirInput(path=".local/share"), ToolContext(ws)))
    assert "openprogram-lsp" not in out.text


def test_a_store_registered_elsewhere_is_protected_too(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store_home = ws / "state"
    SessionStore(store_home)
    assert is_protected(store_home / "sessions", ws)
    with pytest.raises(WorkspaceEscape):
        resolve_in_workspace(ws, "state/sessions")


def test_a_workspace_kept_under_the_state_root_still_edits_its_own_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("OPENPROGRAM_HOME", str(home))
    SessionStore(home)
    ws = home / "projects" / "p"
    ws.mkdir(parents=True)
    assert resolve_in_workspace(ws, "a.txt") == (ws / "a.txt").resolve()
    assert is_protected(home / "sessions", ws)
    assert os.path.isdir(home / "sessions")


def test_a_tool_call_resolves_each_of_its_paths_once(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp.approvals.facts import call_facts
    from openprogram_lsp.tools import paths

    ws = tmp_path / "ws"
    ws.mkdir()
    calls: list[str] = []
    real = os.path.realpath

    def counting(p: object, *args: object, **kwargs: object) -> str:
        calls.append(str(p))
        return real(p)  # type: ignore[arg-type]

    monkeypatch.setattr(paths.os.path, "realpath", counting)
    with paths.resolved_once():  # what ToolRunner.run does around one call
        facts = call_facts(ws, "write_file", "edit", {"path": "a/b.txt"}, "s1")
        assert facts.path == "a/b.txt" and paths.confined(ws, "a/b.txt") == "a/b.txt"
        for _ in range(2):  # a refusal is never remembered: each check refuses again
            with pytest.raises(WorkspaceEscape):
                paths.confined(ws, "../out.txt")
    assert len(calls) == 2  # the workspace and the target, once each
    paths.confined(ws, "a/b.txt")
    assert len(calls) == 4  # outside a call: resolved again
