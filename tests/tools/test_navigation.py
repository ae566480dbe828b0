"""The navigation tools against a stand-in for the editor's language servers (the real ones are
tested in tests/editors/test_nvim_navigate.py): position, confinement, bounds."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.core.errors import OpenProgramError, ToolError
from openprogram_lsp.core.navigation import Navigation, Place, Symbol
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.builtin.navigation import (
    LspDefinition,
    LspReferences,
    LspWorkspaceSymbols,
)


class Servers:
    def __init__(self, answer: Navigation | None, offers: bool = True) -> None:
        self.answer, self.offers, self.asked = answer, offers, []  # type: ignore[var-annotated]

    def offers_diagnostics(self, session_id: str) -> bool:
        return False

    async def diagnostics(self, session_id: str, paths: list[Path], *, settle: bool,
                          within: float | None = None) -> Any:
        return None

    def offers_navigation(self, session_id: str) -> bool:
        return self.offers

    async def navigate(self, session_id: str, kind: Any, **kw: Any) -> Navigation | None:
        self.asked.append((kind, kw))
        return self.answer


def _ctx(ws: Path, servers: Servers) -> ToolContext:
    return ToolContext(workspace=ws, session_id="s", language=servers)  # type: ignore[arg-type]


def test_the_column_of_the_symbol_and_places_outside_as_paths(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\nvalue = café(greet)\n", "utf-8")
    outside = tmp_path / "lib" / "secret.py"
    outside.parent.mkdir()
    outside.write_text("TOKEN = 'do not show'\n", "utf-8")
    servers = Servers(Navigation(places=[Place(ws / "a.py", 1, 13), Place(outside, 0, 0)]))
    tool = LspReferences()
    out = asyncio.run(tool.run(tool.parse({"path": "a.py", "line": 2, "symbol": "greet"}),
                               _ctx(ws, servers)))
    kind, kw = servers.asked[0]
    assert kind == "references" and kw["line"] == 1 and kw["character"] == 13
    assert out.text.splitlines() == [
        "a.py:2:14: value = café(greet)", f"{outside} (outside the workspace)"]
    assert "do not show" not in out.text


def test_errors_name_what_is_wrong(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", "utf-8")
    tool = LspDefinition()
    with pytest.raises(ToolError, match=r"'y' is not on line 1 of a\.py"):
        asyncio.run(tool.run(tool.parse({"path": "a.py", "line": 1, "symbol": "y"}),
                             _ctx(tmp_path, Servers(Navigation()))))
    with pytest.raises(OpenProgramError, match="outside the workspace"):
        asyncio.run(tool.run(tool.parse({"path": "../x.py", "line": 1, "symbol": "y"}),
                             _ctx(tmp_path, Servers(Navigation()))))
    with pytest.raises(ToolError, match="did not answer"):
        asyncio.run(tool.run(tool.parse({"path": "a.py", "line": 1, "symbol": "x"}),
                             _ctx(tmp_path, Servers(None))))


def test_results_are_bounded_and_outside_symbols_dropped(tmp_path: Path) -> None:
    many = [Symbol(f"f{i}", 12, Place(tmp_path / "a.py", i)) for i in range(150)]
    many.append(Symbol("hidden", 12, Place(Path("/usr/lib/x.py"), 0)))
    tool = LspWorkspaceSymbols()
    out = asyncio.run(tool.run(tool.parse({"query": "f"}), _ctx(tmp_path, Servers(
        Navigation(symbols=many)))))
    lines = out.text.splitlines()
    assert lines[0] == "a.py:1: function f0" and lines[-1] == "… and 50 more"
    assert "hidden" not in out.text
