"""Which control files an edit touches (they always ask; the list: tests/core)."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.approvals.facts import control_paths


def test_control_paths_resolve_the_path_and_a_moves_destination(tmp_path: Path) -> None:
    (tmp_path / ".vscode").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / ".vscode")
    assert control_paths(tmp_path, "edit", {"path": "./.vscode/settings.json"}) == [
        ".vscode/settings.json"]
    assert control_paths(tmp_path, "edit", {"path": "link/settings.json"}) == [
        ".vscode/settings.json"]
    assert control_paths(tmp_path, "move", {"path": "a.txt", "to": "x.code-workspace"}) == [
        "x.code-workspace"]
    assert control_paths(tmp_path, "edit", {"path": "a.txt"}) == []
    assert control_paths(tmp_path, "read", {"path": ".vscode/settings.json"}) == []
    assert control_paths(tmp_path, "edit", {"path": "../outside/.vscode/settings.json"}) == []
