"""What request handlers need of their connection (``server.OpenProgramServer``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from openprogram_lsp.config import Settings as ConfigSettings
from openprogram_lsp.core.types import ClientOptions
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.lsp.host import ServerHost
from openprogram_lsp.lsp.link import Link
from openprogram_lsp.lsp.turns import TurnRunner
from openprogram_lsp.store.checkpoints.results import RestoreOutcome


class ConnectionView(Link, Protocol):
    """One editor's connection: its settings and subscriptions, the shared host and runner."""

    host: ServerHost
    owner_key: str
    client_options: ClientOptions

    def workspace_settings(self) -> ConfigSettings | None:
        """The config files' settings of this editor's folder."""

    @property
    def dispatcher(self) -> Dispatcher:
        """The shared dispatcher."""

    @property
    def runner(self) -> TurnRunner:
        """The shared turn runner."""

    @property
    def primary_workspace(self) -> Path:
        """The first workspace folder (or the configured workspace)."""

    def window_show_message(self, params: Any) -> None:
        """``window/showMessage`` to this editor."""


class HandlersView(Protocol):
    """What feature handler groups (``code_handlers``) use of the main ``Handlers``."""

    server: ConnectionView

    @property
    def dispatcher(self) -> Dispatcher:
        """The shared dispatcher."""

    def _session(self, sid: str) -> str: ...

    def _node(self, sid: str, node_id: str, field: str) -> str: ...

    def _refuse_during_turn(self) -> None: ...

    def _changed(self, out: RestoreOutcome) -> None: ...
