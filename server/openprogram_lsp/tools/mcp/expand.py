"""MCP prompts as slash commands and resources as ``@server:uri`` references in a message.

``/mcp__notes__review code=x`` (or ``/mcp__notes__review some text`` for a one-argument
prompt; ``@`` references in it are attachments, not arguments) becomes the prompt's messages;
every ``@notes:note://readme`` whose server is running attaches the resource's contents.
What the user typed stays the message; the expansion is what the model reads.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.core.errors import InvalidParams
from openprogram_lsp.tools.mcp.catalog import McpCallError, PromptInfo
from openprogram_lsp.tools.mcp.config import full_name
from openprogram_lsp.tools.mcp.hub import McpHub
from openprogram_lsp.tools.output import cap_text

_COMMAND = re.compile(r"^/(mcp__[A-Za-z0-9_-]+)(?:\s+(.*))?$", re.DOTALL)
_REFERENCE = re.compile(r"(?<![\w@])@([A-Za-z0-9_.-]+):(\S+)")
MAX_RESOURCE_BYTES = 100_000


@dataclass(slots=True)
class Expansion:
    """The text the model reads instead of the message, and what went into it."""

    text: str
    prompt: str | None = None
    resources: list[str] = field(default_factory=list)


def _prompt_arguments(prompt: PromptInfo, rest: str) -> dict[str, str]:
    """``key=value`` words, else the whole rest as the only (or first required) argument."""
    rest = rest.strip()
    if not rest:
        args: dict[str, str] = {}
    else:
        try:
            words = shlex.split(rest)
        except ValueError:
            words = []
        names = {a.name for a in prompt.arguments}
        pairs = [w.split("=", 1) for w in words if "=" in w]
        if words and len(pairs) == len(words) and all(k in names for k, _ in pairs):
            args = {k: v for k, v in pairs}
        elif prompt.arguments:
            first = next((a for a in prompt.arguments if a.required), prompt.arguments[0])
            args = {first.name: rest}
        else:
            raise InvalidParams(f"/{prompt.name} takes no arguments")
    missing = [a.name for a in prompt.arguments if a.required and a.name not in args]
    if missing:
        raise InvalidParams(f"missing argument(s) for the MCP prompt: {', '.join(missing)} "
                            f"(write {' '.join(f'{m}=...' for m in missing)})")
    return args


def _message_text(content: dict[str, Any]) -> str:
    kind = content.get("type")
    if kind == "text":
        return str(content.get("text", ""))
    if kind == "resource":
        res = content.get("resource") or {}
        if isinstance(res.get("text"), str):
            return f"[resource <{res.get('uri', '')}>]\n{res['text']}"
        return f"[binary resource <{res.get('uri', '')}>]"
    return f"[{kind or 'unknown'} content]"


async def _expand_prompt(hub: McpHub, workspace: Path, text: str) -> tuple[str, str] | None:
    match = _COMMAND.match(text.strip())
    if match is None:
        return None
    command = match.group(1)
    found = [(server, p) for server, p in hub.prompts(workspace)
             if full_name(server, p.name) == command]
    if not found:
        known = ", ".join(f"/{full_name(s, p.name)}" for s, p in hub.prompts(workspace))
        raise InvalidParams(f"/{command} is not a prompt of a running MCP server"
                            + (f"; available: {known}" if known else ""))
    server, prompt = found[0]
    rest = _REFERENCE.sub("", match.group(2) or "")  # references attach; they are not arguments
    args = _prompt_arguments(prompt, rest)
    try:
        messages = await hub.get_prompt(workspace, server, prompt.name, args)
    except McpCallError as exc:
        raise InvalidParams(str(exc)) from None
    parts = []
    for m in messages:
        body = _message_text(m.get("content") or {})
        parts.append(body if m.get("role") == "user" else f"[{m.get('role')}]\n{body}")
    return "\n\n".join(parts), f"{server}/{prompt.name}"


async def _attach_resources(hub: McpHub, workspace: Path, text: str
                            ) -> tuple[list[str], list[str]]:
    servers = {name for name, c in hub.space(workspace).connections.items()
               if c.state == "ready"}
    blocks: list[str] = []
    refs: list[str] = []
    for server, raw_uri in dict.fromkeys(_REFERENCE.findall(text)):
        uri = raw_uri.rstrip(".,;:)]}!?'\"")
        if server not in servers or not uri:
            continue
        ref = f"@{server}:{uri}"
        try:
            contents = await hub.read_resource(workspace, server, uri)
        except McpCallError as exc:
            blocks.append(f"[{ref} could not be read: {exc}]")
            continue
        body = []
        for c in contents:
            if isinstance(c.get("text"), str):
                body.append(c["text"])
            else:
                body.append(f"[binary content, {c.get('mimeType') or 'unknown type'}]")
        capped = cap_text("\n".join(body), max_bytes=MAX_RESOURCE_BYTES)
        blocks.append(f"[attached {ref}]\n{capped}")
        refs.append(ref)
    return blocks, refs


async def expand(hub: McpHub, workspace: Path, text: str) -> Expansion | None:
    """The expansion of a message, or None when it uses no MCP prompt or resource."""
    prompt = await _expand_prompt(hub, workspace, text)
    base = prompt[0] if prompt else text
    blocks, refs = await _attach_resources(hub, workspace, text)
    if prompt is None and not blocks:
        return None
    return Expansion(text="\n\n".join([base, *blocks]), prompt=prompt[1] if prompt else None,
                     resources=refs)
