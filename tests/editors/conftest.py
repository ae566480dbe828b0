"""Fixtures of the editor tests."""

from __future__ import annotations

import pytest

from tests.editors.nvim import runner
from tests.tooling import require


@pytest.fixture
def require_nvim() -> None:
    """Neovim must exist (skipped locally without it, a failure in CI)."""
    require(runner.nvim_binary(), "Neovim is not installed")
