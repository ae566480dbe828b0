"""The tools one turn offers: built-ins and collab tools, MCP servers' tools, then admission."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from openprogram_lsp.config.sections.mcp import ToolsSection
from openprogram_lsp.context.commands import expand as expand_command
from openprogram_lsp.context.commands import load_commands
from openprogram_lsp.context.commands import parse as parse_command
from openprogram_lsp.core.types import ClientOptions, Node
from openprogram_lsp.dispatcher.services import Services
from openprogram_lsp.store.session_handle import SessionHandle
from openprogram_lsp.tools.builtin.navigation import navigation_tools
from openprogram_lsp.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

NAVIGATION_TOOLS = navigation_tools()  # offered where the session's editor can answer them


async def turn_tools(services: Services, workspace: Path, *, session_id: str,
                     turn_id: str, options: ClientOptions | None = None) -> ToolRegistry:
    """The registry a turn runs with; MCP servers start here on a workspace's first turn.

    ``options`` are the driving editor's: its disabled tools add to the configured ones, its
    allow-list replaces theirs, and only its own editor MCP servers are offered."""
    options = options or ClientOptions()
    registry = services.tools
    hub = services.mcp
    if hub is not None:
        try:
            extra = await hub.tools_for(workspace, approver=services.approver,
                                        session_id=session_id, turn_id=turn_id,
                                        editor_owner=options.mcp_owner)
        except asyncio.CancelledError:
            raise
        except Exception:  # a broken MCP setup must never cost the user the turn
            log.exception("MCP tools unavailable for %s", workspace)
            extra = []
        if extra:
            registry = registry.with_tools(extra)
    language = services.language
    if language is not None and language.offers_navigation(session_id):
        registry = registry.with_tools(NAVIGATION_TOOLS)
    base_disabled, base_allowed = services.disabled_tools, services.allowed_tools
    if services.settings_for is not None:  # [tools] of the workspace's own config file
        section = services.settings_for(workspace).get(ToolsSection)
        base_disabled, base_allowed = list(section.disabled), section.allowed
    disabled = [*base_disabled, *options.disabled_tools]
    allowed = (list(options.allowed_tools) if options.allowed_tools is not None
               else base_allowed)
    if disabled or allowed is not None:
        registry = registry.admitted(disabled=disabled, allowed=allowed)
    return registry


async def expand_user_message(services: Services, workspace: Path, session: SessionHandle,
                              user: Node) -> Node:
    """The user node with ``modelText`` set when it uses an MCP prompt or resource.

    A misused prompt (unknown, missing arguments) raises InvalidParams: the turn fails with
    a message saying how to call it, rather than the model guessing.
    """
    custom = _custom_command(workspace, user)
    if custom is not None:
        meta = {**user.metadata, "modelText": custom[1], "slashCommand": custom[0]}
        return session.update_node(user.id, metadata=meta)
    hub = services.mcp
    if hub is None or user.role != "user" or not user.text or (
            "/mcp__" not in user.text and "@" not in user.text):
        return user
    # MCP's prompts and resources: loaded when a message may name one
    from openprogram_lsp.tools.mcp.expand import expand

    expansion = await expand(hub, workspace, user.text)
    if expansion is None:
        return user
    meta = {**user.metadata, "modelText": expansion.text,
            "mcp": {"prompt": expansion.prompt, "resources": expansion.resources}}
    return session.update_node(user.id, metadata=meta)


def _custom_command(workspace: Path, user: Node) -> tuple[dict[str, str], str] | None:
    """A custom slash command's record and its expanded prompt, when the message is one."""
    if user.role != "user" or not user.text.startswith("/"):
        return None
    parsed = parse_command(user.text)
    if parsed is None:
        return None
    name, rest = parsed
    found = next((c for c in load_commands(workspace) if c.name == name
                  and c.source != "builtin"), None)
    if found is None:
        return None
    return ({"name": name, "source": found.source, "path": found.path or ""},
            expand_command(found, rest))
