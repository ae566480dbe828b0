"""A custom tool for openprogram-lsp: a small MCP server on the MCP SDK, run over stdio.

Name it in a workspace's ``.mcp.json`` (``mcp.json`` beside this file is such an entry):

    {"mcpServers": {"text": {"command": "python", "args": ["examples/mcp_tool/server.py"]}}}

The first turn asks the user to start the server; its tools then reach the model as
``mcp__text__<tool>``, under the same approvals as the built-in tools (a tool marked
``readOnlyHint`` is never asked about). ``openprogram/mcp`` (the editors' MCP view) lists it.
"""

from __future__ import annotations

import re

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("text", instructions="Text utilities.", log_level="WARNING")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def word_count(text: str) -> str:
    """Count the words, lines and characters of a text."""
    words = len(re.findall(r"\S+", text))
    return f"{words} words, {len(text.splitlines())} lines, {len(text)} characters"


if __name__ == "__main__":
    app.run()
