"""The MCP servers ``session/new`` and ``session/load`` pass, as the session's tool sources.

The agent talks to the MCP layer only through this small interface; ``app`` injects the real
one. Without an MCP layer the servers are not started and a warning names them (an editor
such as Zed passes its MCP servers to every agent, so refusing the session would lock users out).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)


class ToolSources(Protocol):
    """Connects a session's MCP servers (ACP's stdio/http server descriptions)."""

    http: bool
    """Whether HTTP servers are supported (advertised as ``mcpCapabilities.http``)."""

    async def connect(self, session_id: str, workspace: Path, servers: list[Any]) -> None:
        """Start (or reuse) the servers and make their tools available to the session."""
        ...

    async def disconnect(self, session_id: str) -> None:
        """Drop one session's servers (``session/close``)."""
        ...

    async def close(self) -> None:
        """Stop every server started through this interface."""
        ...


class NoToolSources:
    """No MCP layer in this build: the servers are named in a warning and not started."""

    http = False

    async def connect(self, session_id: str, workspace: Path, servers: list[Any]) -> None:
        names = ", ".join(str(getattr(s, "name", "?")) for s in servers)
        log.warning("session %s: MCP servers not started (no MCP layer): %s", session_id, names)

    async def disconnect(self, session_id: str) -> None:
        return None

    async def close(self) -> None:
        return None
