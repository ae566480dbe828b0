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


def test_a_failing_commands_output_shows_its_first_lines_and_folds_open(
        env: dict[str, Path]) -> None:
    command = "for i in $(seq 1 30); do echo out line $i; done; echo boom >&2; exit 3"
    out = run_scripted(env, "tool_output", [
        {"text": "Running.", "tool_calls": [{"name": "run_command", "arguments": {
            "command": command, "description": "failing"}}]},
        {"text": "It failed."},
    ])
    for view in (out["live"], out["history"]):
        assert "✗" in view["line"] and "failed" in view["line"]
        after = view["after"]
        assert after[0] == "    ! " + after[0][6:] and after[0][6:] != ""  # the first lines shown
        assert sum(1 for x in after if x.startswith("    ! ")) == 3
        folded = [x for x in after if x.startswith("    │ ")]
        assert any("out line 30" in x for x in folded), after
        assert any("boom" in x for x in after)  # stderr too
        assert view["closed"] and "lines of output" in view["foldtext"]
        assert view["open_after_cr"] and view["closed_again"]
    assert "branch main" in out["winbar"]
    assert out["labels"] == ["try-2", "2/2", "main"]
