"""MCP servers as a tool source (the only package importing the ``mcp`` SDK, and lazily).

``McpHub`` is the entry point: per-workspace servers from ``.mcp.json`` (trusted first), the
user config file, editor settings and ACP sessions; their tools as ``mcp__<server>__<tool>``.
"""

from openprogram_lsp.tools.mcp.config import ServerDef, full_name, parse_acp_servers, parse_servers
from openprogram_lsp.tools.mcp.hub import WORKSPACE_FILE, McpHub

__all__ = ["WORKSPACE_FILE", "McpHub", "ServerDef", "full_name", "parse_acp_servers",
           "parse_servers"]
