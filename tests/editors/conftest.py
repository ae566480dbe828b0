"""Fixtures of the editor tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors.nvim import runner
from tests.tooling import require


@pytest.fixture
def require_nvim() -> None:
    """Neovim must exist (skipped locally without it, a failure in CI)."""
    require(runner.nvim_binary(), "Neovim is not installed")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Path]:
    """A workspace and a private OPENPROGRAM_HOME for a Neovim scenario."""
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    return {"ws": ws, "home": home, "tmp": tmp_path}
