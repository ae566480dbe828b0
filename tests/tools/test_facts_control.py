"""Which edits touch the agent's own settings (they always ask)."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.tools.facts import control_paths, is_control_file


def test_control_files_are_the_agents_own_settings_only() -> None:
    assert is_control_file(".vscode/settings.json")
    assert is_control_file(".openprogram/config.toml")
    assert is_control_file("team.code-workspace") and is_control_file("a/b.code-workspace")
    assert not is_control_file("src/settings.json") and not is_control_file(".vscode/tasks.txt")


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
