"""Code that follows the conversation in a real Neovim: the plugin's branch switch with its
code (asked once, undoable), the branch diff tabs and blame lenses; and a plain Neovim client
(no plugin) getting code lenses and hovers from the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.nvim import runner

pytestmark = [
    pytest.mark.usefixtures("require_nvim"),
    pytest.mark.timeout(180),
]


def test_switch_code_undo_compare_and_blame_with_the_plugin(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    out = runner.run_scenario("code_switch", ws, model="offline", home=home)
    assert out["before_fork"] == "two\n"
    assert out["switch_items"][0].startswith("Yes, switch the code too")
    assert out["after_fork"] == {"a": "one\n", "b": "alt\n"}  # the fork's own code
    assert out["remembered"] == "always"
    assert out["asked"].count("openprogram.switch_code") == 1  # asked once
    other = [item for item in out["branch_items"] if item.startswith("  ") and "✎" not in item]
    assert other and all("≠ code" in item for item in other)
    assert not any("≠ code" in item for item in out["branch_items"] if item.startswith("*"))
    assert out["after_switch"] == {"a": "two\n"}  # b.txt is not on the first branch
    assert out["after_undo"] == {"a": "one\n", "b": "alt\n"}
    contents = sorted(sorted("\n".join(w["lines"]) for w in tab) for tab in out["diff_sides"])
    assert out["diff_tabs"] == 2 and contents == [["", "alt"], ["one", "two"]]
    for tab in out["diff_sides"]:
        assert all(w["diff"] for w in tab) and any("branch" in w["bar"] for w in tab)
    assert [lens["title"] for lens in out["lenses"]] == [
        "edited by the agent in turn 2 · ran in bypass"]


def test_a_plain_neovim_client_gets_code_lenses_and_hovers(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / "f.txt").write_text("old\n")
    out = runner.run_scenario("blame_plain", ws, model="offline", home=home, plugin=False)
    assert out["buffer"] == ["first line", "second line"]
    assert out["lenses"] == ["edited by the agent in turn 1 · ran in bypass"]
    assert "edited by the agent in turn 1" in out["hover"] and "write_file" in out["hover"]
