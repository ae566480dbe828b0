"""The asks around one edit: what the editor is told to wait, so that both asks together add at
most ``BUDGET`` to the edit, round trips included; and what the model is told it has."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprogram_lsp.agent import edit_diagnostics
from openprogram_lsp.agent.edit_diagnostics import BUDGET, EditCheck, editor_diagnostics
from openprogram_lsp.config.loader import Settings
from openprogram_lsp.core.diagnostics import Diagnostic
from openprogram_lsp.core.navigation import Navigation
from openprogram_lsp.tools.base import ToolContext


class Clock:
    """A fake monotonic clock the fake editor moves on."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Editor:
    """An editor whose language server reports one new error after the edit; each ask costs
    ``trip`` seconds of round trip plus what the editor waits (``load`` before, all it was
    allowed after: the slowest an editor may be)."""

    def __init__(self, clock: Clock, *, trip: float, load: float = 0.0,
                 offers: bool = True) -> None:
        self.clock, self.trip, self.load, self.offers = clock, trip, load, offers
        self.asks: list[tuple[bool, float | None]] = []

    def offers_diagnostics(self, session_id: str) -> bool:
        return self.offers

    async def diagnostics(self, session_id: str, paths: list[Path], *, settle: bool,
                          within: float | None = None) -> dict[Path, list[Diagnostic]] | None:
        self.asks.append((settle, within))
        waited = (within or 0.0) if settle else self.load
        self.clock.now += self.trip + waited
        return {paths[0]: [Diagnostic(line=2, message="undefined name 'y'")] if settle else []}

    def offers_navigation(self, session_id: str) -> bool:
        return False

    async def navigate(self, session_id: str, kind: str, **_: object) -> Navigation | None:
        return None


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(edit_diagnostics.time, "monotonic", fake)
    return fake


async def _edit(tmp_path: Path, editor: Editor, clock: Clock) -> tuple[str, float]:
    ctx = ToolContext(workspace=tmp_path, session_id="s", language=editor,
                      settings=Settings.defaults())
    check = EditCheck(ctx, "edit_file", {"path": "m.py"})
    started = clock.now
    await check.before()
    said = await check.after()
    return said, clock.now - started


@pytest.mark.parametrize(("trip", "load"), [(0.004, 0.0), (0.05, 0.0), (0.004, 0.9),
                                            (0.05, 1.4)])
async def test_both_asks_add_at_most_the_budget_round_trips_included(
        tmp_path: Path, clock: Clock, trip: float, load: float) -> None:
    """An editor taking every moment it is allowed, on a round trip up to 0.1 s: the two asks
    stay within 1.5 s (a file it had to load first leaves the ask after at least 0.3 s)."""
    editor = Editor(clock, trip=trip, load=load)
    said, took = await _edit(tmp_path, editor, clock)
    assert "line 3: error: undefined name 'y'" in said
    (settle_before, _), (settle_after, within) = editor.asks
    assert not settle_before and settle_after
    assert within is not None and within >= edit_diagnostics.MIN_AFTER
    if load + 2 * trip + edit_diagnostics.MIN_AFTER <= BUDGET:
        assert took <= BUDGET + 1e-9, took
    else:  # the load took most of it: the ask after still gets its minimum
        assert within == edit_diagnostics.MIN_AFTER


async def test_an_editor_that_offers_none_is_not_asked(tmp_path: Path, clock: Clock) -> None:
    editor = Editor(clock, trip=0.01, offers=False)
    said, took = await _edit(tmp_path, editor, clock)
    assert said == "" and took == 0 and editor.asks == []


def test_what_the_model_is_told_it_has(tmp_path: Path) -> None:
    clock = Clock()
    assert editor_diagnostics(ToolContext(workspace=tmp_path)) == "none"  # ACP, CLI
    blind = ToolContext(workspace=tmp_path, language=Editor(clock, trip=0, offers=False))
    assert editor_diagnostics(blind) == "none"  # a plain LSP client
    seeing = ToolContext(workspace=tmp_path, language=Editor(clock, trip=0))
    assert editor_diagnostics(seeing) == "errors"  # the default level
