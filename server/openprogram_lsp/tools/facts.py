"""What rules look at in a call: its command's simple commands, or its resolved path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.tools.paths import confined
from openprogram_lsp.tools.rules import EDIT_KINDS, CallFacts
from openprogram_lsp.tools.shell_split import split_command


def call_facts(workspace: Path, tool: str, kind: Any, arguments: dict[str, Any],
               session_id: str | None, rules_branch: str | None = None) -> CallFacts:
    """The facts of one call (an edit's path resolved through links, workspace-relative)."""
    parts: tuple[str, ...] = ()
    path: str | None = None
    command = arguments.get("command")
    if kind == "execute" and isinstance(command, str):
        parts = tuple(split_command(command))
    raw = arguments.get("path")
    if kind in EDIT_KINDS and isinstance(raw, str):
        try:
            path = confined(workspace, raw)
        except OpenProgramError:
            path = None  # the tool will refuse it; no rule covers it meanwhile
    return CallFacts(tool=tool, kind=kind, arguments=arguments, session_id=session_id,
                     parts=parts, path=path, rules_branch=rules_branch)


def is_control_file(rel: str) -> bool:
    """Whether a workspace-relative path configures the agent itself: an edit to it could widen
    its own permissions (VS Code's workspace settings hold the permission mode and the server
    command; a ``.code-workspace`` file holds settings too; ``.openprogram/config.toml``)."""
    name = rel.rsplit("/", 1)[-1]
    return rel in (".vscode/settings.json", ".openprogram/config.toml") \
        or name.endswith(".code-workspace")


def control_paths(workspace: Path, kind: Any, arguments: dict[str, Any]) -> list[str]:
    """The control files an edit, delete or move touches (``path`` and a move's ``to``)."""
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
        if is_control_file(rel.lower()):
            out.append(rel)
    return out
