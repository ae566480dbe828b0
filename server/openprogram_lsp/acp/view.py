"""What slash commands and the editor bridge need of the ACP agent (``agent.OpenProgramAgent``)."""

from __future__ import annotations

from typing import Protocol

from acp.schema import ClientCapabilities

from openprogram_lsp.acp import commands as cmds
from openprogram_lsp.acp.approvals import Peer
from openprogram_lsp.acp.session import AcpSession
from openprogram_lsp.acp.updates import SessionUpdate
from openprogram_lsp.dispatcher import Dispatcher


class AgentView(Protocol):
    """The connected ACP client, its sessions and the session commands."""

    peer: Peer | None
    client: ClientCapabilities
    sessions: dict[str, AcpSession]
    commands: cmds.Commands
    dispatcher: Dispatcher

    def notify(self, session_id: str, update: SessionUpdate) -> None:
        """Send a ``session/update``."""

    def show_terminal(self, session_id: str, terminal_id: str) -> None:
        """Embed a client terminal in the session's current tool call."""

    def set_setting(self, sess: AcpSession, config_id: str, value: str) -> None:
        """Change a session setting (model, mode), store it and show it to the client."""

    def acp_id(self, store_id: str) -> str | None:
        """The ACP session a stored session's turn belongs to (None: not open here)."""
