"""What a connected server offers, and what a call returns, in our own plain types.

Only ``connection`` touches the SDK's models; everything above works with these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from openprogram_lsp.core.types import ToolKind

ServerState = Literal["stopped", "starting", "ready", "restarting", "failed", "untrusted",
                      "denied", "invalid"]


class McpCallError(Exception):
    """A call that could not complete: timeout, crash, protocol error, server not up."""


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """One tool a server lists."""

    name: str
    description: str
    input_schema: dict[str, Any]
    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None

    @property
    def kind(self) -> ToolKind:
        """``readOnlyHint`` -> read, ``destructiveHint`` -> delete (false: edit), else other."""
        if self.read_only:
            return "read"
        if self.destructive is True:
            return "delete"
        if self.destructive is False:
            return "edit"
        return "other"


@dataclass(frozen=True, slots=True)
class PromptArg:
    """One argument a prompt takes."""

    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True)
class PromptInfo:
    """One prompt a server lists (offered as ``/mcp__server__prompt``)."""

    name: str
    description: str = ""
    arguments: tuple[PromptArg, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """One resource a server lists (attachable as ``@server:uri``)."""

    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None


@dataclass(slots=True)
class CallResult:
    """A tool result as content blocks: text, image, audio, resource_link, resource."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    is_error: bool = False
    structured: Any = None


@dataclass(slots=True)
class Offer:
    """Everything one server offers after a (re)connect."""

    tools: list[ToolInfo] = field(default_factory=list)
    prompts: list[PromptInfo] = field(default_factory=list)
    resources: list[ResourceInfo] = field(default_factory=list)
    server_name: str | None = None
    server_version: str | None = None
