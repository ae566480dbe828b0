"""What rules look at in a call: its command's simple commands, or its resolved path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openprogram_lsp.approvals.rules import EDIT_KINDS, CallFacts
from openprogram_lsp.approvals.shell_split import split_command
from openprogram_lsp.core.control_files import is_control_file
from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.tools.paths import confined
from openprogram_lsp.tools.urls import url_host


def call_facts(workspace: Path, tool: str, kind: Any, arguments: dict[str, Any],
               session_id: str | None, rules_branch: str | None = None, *,
               mcp: tuple[str, str] | None = None, destructive: bool = False) -> CallFacts:
    """The facts of one call (an edit's path resolved through links, workspace-relative;
    ``mcp``: the server and tool of an MCP tool, whose rules are its own)."""
    parts: tuple[str, ...] = ()
    path: str | None = None
    command = arguments.get("command")
    if kind == "execute" and isinstance(command, str):
        parts = tuple(split_command(command))
    host: str | None = None
    if kind == "fetch" and isinstance(arguments.get("url"), str):
        host = url_host(arguments["url"])
    raw = arguments.get("path")
    if kind in EDIT_KINDS and isinstance(raw, str) and mcp is None:
        try:
            path = confined(workspace, raw)
        except OpenProgramError:
            path = None  # the tool will refuse it; no rule covers it meanwhile
    return CallFacts(tool=tool, kind=kind, arguments=arguments, session_id=session_id,
                     parts=parts, path=path, host=host, rules_branch=rules_branch, mcp=mcp,
                     destructive=destructive)


def control_paths(workspace: Path, kind: Any, arguments: dict[str, Any]) -> list[str]:
    """The control files (``core.control_files``) an edit, delete or move touches (``path`` and
    a move's ``to``); the write helpers refuse any other one the call then tries to write."""
    if kind not in EDIT_KINDS:
        return []
    out: list[str] = []
    for key in ("path", "to"):
        raw = arguments.get(key)
        if not isinstance(raw, str):
            continue
        try:
            rel = confined(workspace, raw)
        except OpenProgramError:
            continue
        if is_control_file(rel):
            out.append(rel)
    return out
