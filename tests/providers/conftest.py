"""Fixtures: a loopback server per test, fast retry settings, the shared client closed after."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.providers.http import HttpSettings, aclose_shared_client

from .loopback import LoopbackServer

SECRET = "sk-test-0123456789abcdefSECRET"


class SleepRecorder:
    """Records the waits the retry policy asks for, without waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    """A fresh loopback HTTP server."""
    srv = LoopbackServer().start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def sleeps() -> SleepRecorder:
    """The recorder the test settings sleep through."""
    return SleepRecorder()


@pytest.fixture
def settings(sleeps: SleepRecorder) -> HttpSettings:
    """Short timeouts and recorded (not real) backoff waits."""
    return HttpSettings(connect_timeout=5.0, read_timeout=10.0, max_retries=3,
                        backoff_base=0.5, backoff_cap=4.0, max_retry_wait=60.0, sleep=sleeps)


@pytest.fixture
def make_dispatcher(make_dispatcher: Callable[..., Dispatcher]) -> Callable[..., Dispatcher]:
    """Dispatchers configured by the environment the test set (base URLs), as the CLI reads it."""
    def make(model: str | None = None, **kwargs: Any) -> Dispatcher:
        kwargs.setdefault("settings", load_settings(user_file=False))
        return make_dispatcher(model, **kwargs)

    return make


@pytest.fixture(autouse=True)
async def _close_client() -> AsyncIterator[None]:
    yield
    await aclose_shared_client()
