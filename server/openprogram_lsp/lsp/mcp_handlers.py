"""Handlers of the MCP methods: status, restart, and revoking a ``.mcp.json`` trust answer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.core.errors import ConfigError, NotFound
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.requests import handles
from openprogram_lsp.tools.mcp import McpHub

if TYPE_CHECKING:
    from openprogram_lsp.lsp.view import ConnectionView


class McpHandlers:
    """``openprogram/mcp``, ``openprogram/mcpRestart`` and ``openprogram/mcpRevokeTrust``."""

    def __init__(self, server: ConnectionView) -> None:
        self.server = server

    @property
    def hub(self) -> McpHub:
        hub = self.server.dispatcher.services.mcp
        if hub is None:
            raise ConfigError("MCP support is not enabled in this server")
        return hub

    @property
    def workspace(self) -> Path:
        return Path(self.server.primary_workspace)

    def _servers(self) -> list[w.McpServerInfo]:
        return [w.McpServerInfo.model_validate(row) for row in self.hub.status(self.workspace)]

    @handles("openprogram/mcp")
    async def status(self, _p: w.EmptyParams) -> dict[str, Any]:
        hub = self.hub
        trust = [w.McpTrustInfo(server=e.server, decision=e.decision, created_at=e.created_at,
                                command=e.command)
                 for e in [*hub.trust_book(self.workspace).entries(),
                           *hub.editor_trust.entries()]]
        return w.McpResult(workspace=str(self.workspace), servers=self._servers(), trust=trust,
                           problems=hub.config_problems(self.workspace)).wire()

    @handles("openprogram/mcpRestart")
    async def restart(self, p: w.McpRestartParams) -> dict[str, Any]:
        hub = self.hub
        known = set(hub.definitions(self.workspace))
        if p.server is not None and p.server not in known:
            raise NotFound(f"server: no MCP server named {p.server!r} is configured")
        restarted = await hub.restart(self.workspace, p.server)
        if p.server is None or p.server not in restarted:  # never started: start it now
            await hub.start(self.workspace)
            restarted = sorted(set(restarted) | ({p.server} if p.server else set()))
        return w.McpRestartResult(restarted=restarted, servers=self._servers()).wire()

    @handles("openprogram/mcpRevokeTrust")
    async def revoke_trust(self, p: w.McpRevokeTrustParams) -> dict[str, Any]:
        revoked = await self.hub.revoke_trust(self.workspace, p.server)
        return w.McpRevokeTrustResult(revoked=revoked).wire()
