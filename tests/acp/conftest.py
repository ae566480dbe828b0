"""Fixtures for the ACP tests: a dispatcher on a private bus, and the in-process pair."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import EventBus
from tests.acp.client import RecordingClient, in_process


@pytest.fixture
def dispatcher(home: Path, workspace: Path) -> Dispatcher:
    return build_dispatcher(AppConfig(home=home, workspace=workspace), bus=EventBus())


@pytest.fixture
def client() -> RecordingClient:
    return RecordingClient()


@pytest.fixture
async def acp(dispatcher: Dispatcher, client: RecordingClient) -> AsyncIterator[Any]:
    async with in_process(dispatcher, client) as (conn, _agent):
        yield conn
