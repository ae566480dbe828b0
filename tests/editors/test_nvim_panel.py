"""The Neovim panel's windows: one panel per tab page, closing and reopening as a unit, its
width following the screen."""

from __future__ import annotations

from pathlib import Path

from tests.editors.nvim.runner import run_scripted


def kinds(layout: list[list[object]]) -> list[object]:
    """The kinds of windows of a layout, in window order."""
    return sorted(w[0] for w in layout)  # type: ignore[type-var]


def test_one_panel_per_tab_page_closing_as_a_unit(env: dict[str, Path]) -> None:
    out = run_scripted(env, "panel_tabs", [{"text": "unused"}])
    opened = out["opened"]
    assert kinds(opened) == ["code", "input", "log"]
    log = next(w for w in opened if w[0] == "log")
    inp = next(w for w in opened if w[0] == "input")
    assert inp[1] > log[1] and inp[2] == log[2]  # the input under the log
    assert log[3] == 56  # 35% of 160 columns
    assert out["open_in_input"]  # :OpenProgram opens where one types, as <leader>oo does
    # :q from the log, and from the input, closes both
    assert kinds(out["after_q_log"]) == ["code"]
    assert out["reopened"] == opened  # the same layout again
    assert kinds(out["after_q_input"]) == ["code"]
    # a second tab page gets a panel of its own; the first keeps its own
    assert kinds(out["tab2"]) == ["code", "input", "log"] and out["tab2_cur_is_input"]
    assert kinds(out["tab1_kept"]) == ["code", "input", "log"]
    assert kinds(out["tab2_closed"]) == ["code"]
    assert kinds(out["tab1_still"]) == ["code", "input", "log"]
    # the width follows the screen
    assert out["wide"] == 70 and out["narrow"] == 35
