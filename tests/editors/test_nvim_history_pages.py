"""The Neovim panel pages a long session: last page first, older pages at its top line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.nvim import runner

pytestmark = pytest.mark.timeout(180)

OLDER = "> Older messages: move to this line to load them"


def test_the_panel_loads_older_pages_at_its_top(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    out: dict[str, Any] = runner.run_scenario("history_pages", ws, model="offline", home=home)
    first = out["first_page"]
    assert first[0] == OLDER
    assert any("question 4" in ln for ln in first)
    assert not any("question 1" in ln for ln in first)
    assert out["pages"] == 3 and out["loaded"] == 8  # 3 + 3 + 2 nodes of four turns
    assert OLDER not in out["all"]
    assert [n for n in range(1, 5) if any(f"question {n}" in ln for ln in out["all"])] == [
        1, 2, 3, 4]
    requests = out["requests"]
    assert all(r["limit"] == 3 for r in requests)
    assert "beforeNodeId" not in requests[0] and all("beforeNodeId" in r for r in requests[1:])
    # the view stays on the message that was first before each page arrived
    assert out["cursor_after_page_2"] > 1 and out["cursor_after_page_3"] > 1
    assert out["node_at_cursor"]
