"""What request handlers need of their connection (``server.OpenProgramServer``)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.lsp.host import ServerHost
from openprogram_lsp.lsp.link import Link
from openprogram_lsp.lsp.settings import Settings
from openprogram_lsp.lsp.turns import TurnRunner


class ConnectionView(Link, Protocol):
    """One editor's connection: its settings and subscriptions, the shared host and runner."""

    host: ServerHost
    settings: Settings

    @property
    def dispatcher(self) -> Dispatcher:
        """The shared dispatcher."""

    @property
    def runner(self) -> TurnRunner:
        """The shared turn runner."""

    @property
    def primary_workspace(self) -> Path:
        """The first workspace folder (or the configured workspace)."""
