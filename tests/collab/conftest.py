"""Fixtures shared by the collaboration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openprogram_lsp.dispatcher import Dispatcher


@pytest.fixture
def dispatchers() -> Iterator[list[Dispatcher]]:
    """Dispatchers a test builds; their subagent job loops are closed afterwards."""
    made: list[Dispatcher] = []
    yield made
    for d in made:
        d.agents.close()
