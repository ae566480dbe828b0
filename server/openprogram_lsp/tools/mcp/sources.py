"""The hub as a session-scoped tool source (what the ACP agent's ``ToolSources`` expects)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from openprogram_lsp.core.errors import InvalidParams
from openprogram_lsp.tools.mcp.hub import McpHub

log = logging.getLogger(__name__)


class McpToolSources:
    """Connects the MCP servers a client passes for a session (ACP ``session/new``/``load``).

    The servers join the session's workspace (trusted: the user configured them in their
    client) and start at once; their tools reach every turn in that workspace.
    """

    http = True

    def __init__(self, hub: McpHub) -> None:
        self.hub = hub
        self._owners: dict[str, Path] = {}

    async def connect(self, session_id: str, workspace: Path, servers: list[Any]) -> None:
        """Add the servers for ``session_id`` and start them (problems are logged, not fatal)."""
        problems = self.hub.add_servers(workspace, servers, owner=f"acp:{session_id}")
        self._owners[session_id] = workspace
        for problem in problems:
            log.warning("session %s: %s", session_id, problem)
        named = {str(getattr(s, "name", None) or (s.get("name") if isinstance(s, dict) else ""))
                 for s in servers}
        if servers and not (named - {""}):
            raise InvalidParams("mcpServers: every server needs a name")
        await self.hub.start(workspace)

    async def disconnect(self, session_id: str) -> None:
        """Drop one session's servers (they stop at the workspace's next turn or start)."""
        workspace = self._owners.pop(session_id, None)
        if workspace is not None:
            self.hub.remove_servers(workspace, f"acp:{session_id}")

    async def close(self) -> None:
        """Stop every MCP server of the process."""
        for session_id in list(self._owners):
            await self.disconnect(session_id)
        await self.hub.aclose()
