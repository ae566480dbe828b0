"""What the shared host needs of one editor connection (``server.OpenProgramServer``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types
from pygls.workspace import Workspace

from openprogram_lsp.core.types import ClientOptions
from openprogram_lsp.lsp.prompts import LspApprover, LspAsker
from openprogram_lsp.lsp.settings import Settings


class Link(Protocol):
    """One connected editor, as the host fans events, prompts and logs out to it."""

    folders: list[Path]
    subscriptions: set[str]
    approver: LspApprover
    asker: LspAsker
    owner_key: str  # who owns this editor's MCP servers
    client_options: ClientOptions  # the options its turns run with
    settings: Settings

    @property
    def workspace(self) -> Workspace:
        """The editor's open documents."""

    async def workspace_apply_edit_async(
            self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        """``workspace/applyEdit`` to this editor."""

    def request(self, method: str, params: Any, msg_id: str) -> asyncio.Future[Any]:
        """Send a request with a known id and return the response future."""

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""

    def forget_request(self, msg_id: str) -> None:
        """Stop waiting for a response."""

    def sees(self, session_id: str | None) -> bool:
        """Whether this connection receives the events of a session."""

    def send_raw(self, data: bytes) -> bool:
        """Write an already framed message; False when the link is gone."""

    def show_warning(self, message: str) -> None:
        """``window/showMessage`` at warning level."""

    def window_log_message(self, params: Any) -> None:
        """``window/logMessage`` to this editor."""


class Links(Protocol):
    """The host's connected editors, as document buffers look through them."""

    connections: list[Link]

    def owner_for(self, session_id: str | None) -> Link | None:
        """The live connection that prompts of a session go to."""
