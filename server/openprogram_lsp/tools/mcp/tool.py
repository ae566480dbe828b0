"""An MCP server's tool as a registry tool: ``mcp__<server>__<tool>`` with its JSON schema."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, RootModel

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.types import ToolSpec
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.mcp.catalog import CallResult, McpCallError, ToolInfo
from openprogram_lsp.tools.mcp.config import full_name
from openprogram_lsp.tools.mcp.results import to_output

MAX_DESCRIPTION = 4000

Caller = Callable[[str, dict[str, Any]], Awaitable[CallResult]]
"""Calls one tool of one server: (tool name, arguments) -> result."""


class McpArgs(RootModel[dict[str, Any]]):
    """Arguments of an MCP tool: any JSON object (checked against the tool's own schema)."""

    model_config = ConfigDict(defer_build=True)  # as ``core.model.Model`` (a root model)


class McpTool(Tool):
    """Base of the per-tool classes :func:`make_tool` creates."""

    category = "mcp"
    Input = McpArgs

    def __init__(self, server: str, info: ToolInfo, call: Caller,
                 unconfirmed: set[str] | None = None) -> None:
        self.server = server
        self.info = info
        self._call = call
        # the tools its server added after it was trusted whose first call is still to come
        self._unconfirmed = unconfirmed if unconfirmed is not None else set()
        schema = dict(info.input_schema) or {"type": "object"}
        schema.setdefault("type", "object")
        schema.pop("title", None)
        self._schema = schema
        self._validator: Any = None

    def spec(self) -> ToolSpec:
        """The tool as the server described it."""
        return ToolSpec(name=self.name, description=self.description,
                        input_schema=dict(self._schema), kind=self.kind)

    def source(self) -> dict[str, str] | None:
        """Server and tool, for approval cards."""
        return {"server": self.server, "tool": self.info.name}

    def destructive(self) -> bool:
        """The server marks it ``destructiveHint``."""
        return self.info.destructive is True

    def must_ask(self) -> str | None:
        """A tool the server added after it was trusted asks before its first call."""
        if self.info.name not in self._unconfirmed:
            return None
        return f"added by MCP server {self.server} after it was trusted: first use"

    def approved(self) -> None:
        self._unconfirmed.discard(self.info.name)

    def parse(self, arguments: dict[str, Any]) -> BaseModel:
        """Check the arguments against the tool's JSON schema before anyone approves them."""
        if not isinstance(arguments, dict):
            raise ToolError(f"invalid arguments for {self.name}: expected an object")
        problems = self._problems(arguments)
        if problems:
            raise ToolError(f"invalid arguments for {self.name}: {'; '.join(problems)}")
        return McpArgs(arguments)

    def _problems(self, arguments: dict[str, Any]) -> list[str]:
        import jsonschema

        if self._validator is None:
            try:
                cls = jsonschema.validators.validator_for(self._schema)
                cls.check_schema(self._schema)
                self._validator = cls(self._schema)
            except jsonschema.SchemaError:
                self._validator = False  # a broken schema: the server will judge
        if self._validator is False:
            return []
        out = []
        for err in list(self._validator.iter_errors(arguments))[:5]:
            where = ".".join(str(p) for p in err.absolute_path) or "input"
            out.append(f"{where}: {err.message[:200]}")
        return out

    def title(self, args: BaseModel) -> str:
        """``server: tool`` (the card shows the arguments beside it)."""
        return f"MCP {self.server}: {self.info.title or self.info.name}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        """Call the tool on its server; failures come back as tool errors."""
        arguments = cast(McpArgs, args).root
        try:
            result = await self._call(self.info.name, arguments)
        except McpCallError as exc:
            return ToolOutput(str(exc), is_error=True,
                              data={"mcp": {"server": self.server, "tool": self.info.name}})
        if ctx.images is None:
            return to_output(result, server=self.server, tool=self.info.name)
        # images in the result are decoded, maybe downscaled, and stored: off the event loop
        return await asyncio.to_thread(to_output, result, server=self.server,
                                       tool=self.info.name, images=ctx.images)


def make_tool(server: str, info: ToolInfo, call: Caller,
              unconfirmed: set[str] | None = None) -> McpTool:
    """A registry tool for one MCP tool (a class per tool: name and kind are class-level);
    ``unconfirmed``: the server's late tools not yet allowed once (shared, see ``must_ask``)."""
    name = full_name(server, info.name)
    description = (info.description or info.title or info.name)[:MAX_DESCRIPTION]
    cls = type(f"McpTool[{name}]", (McpTool,),
               {"name": name, "description": description, "kind": info.kind})
    return cast(type[McpTool], cls)(server, info, call, unconfirmed)
