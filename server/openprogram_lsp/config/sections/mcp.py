"""``[mcp]`` timeouts, ``[tools]`` static admission, and ``[mcpServers.<name>]`` definitions."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from openprogram_lsp.config.section import EnvVar, Section


class McpSection(Section):
    """How long MCP servers get to start and to answer a tool call."""

    name: ClassVar[str] = "mcp"
    env: ClassVar[dict[str, EnvVar]] = {
        "startup_timeout": EnvVar("OPENPROGRAM_MCP_STARTUP_TIMEOUT",
                                  "seconds an MCP server gets to start and list its tools"),
        "tool_timeout": EnvVar("OPENPROGRAM_MCP_TOOL_TIMEOUT",
                               "seconds an MCP tool call may take before it is cancelled"),
    }

    startup_timeout: float = Field(30.0, gt=0, le=600)
    tool_timeout: float = Field(120.0, gt=0, le=3600)


class McpServersSection(Section):
    """``[mcpServers.<name>]``: servers for every workspace, in the ``.mcp.json`` shape.

    Read from your own file (the hub re-reads it when it changes); a workspace names its
    servers in ``.mcp.json``, where each one is asked about before it starts.
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    name: ClassVar[str] = "mcpServers"

    @classmethod
    def untrusted_keys(cls, raw: dict[str, Any]) -> list[str]:
        """Every server of a workspace file: it would start a command for whoever opens it."""
        return sorted(raw)


class ToolsSection(Section):
    """Static admission: fnmatch patterns on tool names (built-in and ``mcp__server__tool``)."""

    name: ClassVar[str] = "tools"
    env: ClassVar[dict[str, EnvVar]] = {
        "disabled": EnvVar("OPENPROGRAM_DISABLED_TOOLS",
                           "tool-name patterns never offered to the model, comma-separated",
                           split=True),
    }

    disabled: list[str] = Field(default_factory=list)
    allowed: list[str] | None = None
