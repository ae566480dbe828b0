"""Redraws, scrolling and stale pickers of the Neovim panel, in a real headless Neovim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.nvim import runner

pytestmark = pytest.mark.timeout(180)

LONG = "\n".join(f"line {i} of a long story" for i in range(60))


def _has(lines: list[str], *parts: str) -> bool:
    return any(all(p in ln for p in parts) for ln in lines)


def test_redraws_keep_cancelled_calls_and_waiting_questions_scroll_and_stale_pickers(
        tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    model = runner.write_script(tmp_path / "script.json", [
        {"text": "Two things.", "tool_calls": [
            {"id": "c1", "name": "run_command", "arguments": {"command": "sleep 30"}},
            {"id": "c2", "name": "write_file",
             "arguments": {"path": "later.txt", "content": "x\n"}}]},
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Which colour?"}}]},
        {"text": "You chose blue."},
        {"text": LONG, "delay": 0.01},
        {"text": LONG, "delay": 0.002},
        {"text": "second"},
    ])
    out: dict[str, Any] = runner.run_scenario("redraws", ws, model=model, home=home)

    # The cancelled calls: live, after the turn's redraw, and after a session switch.
    for key in ("live_cancel", "cancel_after_switch"):
        assert _has(out[key], "sleep 30", "execute", "cancelled"), out[key]
        assert _has(out[key], "later.txt", "edit", "cancelled"), out[key]
    assert not (ws / "later.txt").exists()

    # The waiting question stays in sight through a reload and a switch, and goes once answered.
    assert "Which colour?" in out["question_prompt"]
    for key in ("question_after_reload", "question_after_switch"):
        assert _has(out[key], "question (waiting for your answer): Which colour?"), out[key]
    assert _has(out["after_answer"], "Which colour?", "completed", "→ blue")

    # Scrolled up: the stream and the redraw leave the reader where they were; at the end: follow.
    assert out["scrolled"] == {"row": 1, "top": 1}
    assert out["following"]["row"] == out["following"]["last"]

    # Pickers: no error in any of them, and stale ones do nothing but say so.
    assert out["picker_errors"] == []
    assert out["redrawn_lines"] >= 1
    assert out["after_stale"]["chosen"] == []
    assert out["after_stale"]["session"] is not None  # "+ New session" in the old one: ignored
    assert out["fast"] == [out["moved"]["first"]]
    assert out["moved"]["shown"] == out["moved"]["first"] != out["moved"]["second"]
    stale = [n for n in out["notes"] if "out of date" in n]
    assert len(stale) == 2, out["notes"]
    assert any("newer one" in n for n in stale) and any("another session" in n for n in stale)
    assert not [n for n in out["notes"] if "failed" in n], out["notes"]
    assert out["errmsg"] == ""
