"""Model-facing collaboration tools: ``agent``, ``send_message`` and ``list_agents``.

The agent layer cannot import the dispatcher, so these tools call the object the dispatcher
reaches through ``ctx.collab`` (the ``core.ports.Collab`` port).
"""

from __future__ import annotations

import dataclasses
import json

from pydantic import BaseModel, Field

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.model import Model
from openprogram_lsp.core.ports import Collab
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput


def _service(ctx: ToolContext) -> Collab:
    if ctx.collab is None:
        raise ToolError("subagents are not available here (no collaboration port injected)")
    return ctx.collab


class AgentInput(Model):
    prompt: str = Field(min_length=1, description="The task for the child agent, self-contained")
    label: str | None = Field(None, description="A short unique name; becomes the child's "
                                                "branch name, usable as send_message's `to`")
    branch_from: str | None = Field(None, description="Omit for a fresh branch that sees only "
                                    "the prompt; \"current\" to fork off this conversation; "
                                    "or a node id to fork there")
    agent: str | None = Field(None, description="The name of an agent definition (see "
                              "list_agents) whose tools, model and instructions the child uses")


class AgentTool(Tool):
    name = "agent"
    description = ("Spawn a child agent on its own branch of this conversation. It runs in the "
                   "background under this conversation's permission mode and rules (its edits "
                   "and commands are approved like yours) and its result comes back to you as "
                   "a follow-up message; do not poll for it.")
    kind = "other"
    category = "collab"
    spawns = True
    Input = AgentInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, AgentInput)
        kind = f" ({args.agent})" if args.agent else ""
        return (f"Spawn agent {args.label}{kind}" if args.label else f"Spawn agent{kind}")

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, AgentInput)
        label = args.label.strip() if args.label else None
        agent = args.agent.strip() if args.agent else None
        return ToolOutput(_service(ctx).spawn_from_tool(ctx.site, args.prompt, label or None,
                                                        args.branch_from, agent or None,
                                                        unattended=ctx.grant == "bypass"))


class SendMessageInput(Model):
    message: str = Field(min_length=1, description="What to tell the other branch")
    to: str = Field(min_length=1, description="A branch name or agent id of this session, or "
                    "SESSION_ID:NODE_ID (NODE_ID may be HEAD or a branch name of that session)")


class SendMessageTool(Tool):
    name = "send_message"
    description = ("Send a message to another existing branch or session; it runs one more turn "
                   "there and the reply comes back to you as a follow-up message (asynchronous, "
                   "do not poll). To create a new branch use the agent tool instead.")
    kind = "other"
    category = "collab"
    Input = SendMessageInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, SendMessageInput)
        return f"Message {args.to}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, SendMessageInput)
        return ToolOutput(_service(ctx).send_from_tool(ctx.site, args.message, args.to.strip()))


class ListAgentsInput(Model):
    pass


class ListAgentsTool(Tool):
    name = "list_agents"
    description = ("List the child agents and message deliveries of this session with their "
                   "branch tip, label and status (running, done, error, cancelled), and the "
                   "agent definitions usable as the agent tool's `agent`.")
    kind = "read"
    category = "collab"
    Input = ListAgentsInput

    def title(self, args: BaseModel) -> str:
        return "List agents"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        service = _service(ctx)
        agents = [{k: v for k, v in dataclasses.asdict(a).items() if v is not None}
                  for a in service.agents_for_tool(ctx.site)]
        definitions = [{k: v for k, v in dataclasses.asdict(d).items()
                        if v is not None or k == "tools"}  # tools None: every tool
                       for d in service.definitions_for_tool(ctx.site)]
        lines = ([json.dumps(a, sort_keys=True) for a in agents] if agents
                 else ["No agents in this session yet."])
        if definitions:
            lines.append("Agent definitions (agent(agent=NAME, prompt=...)):")
            lines.extend(json.dumps(d, sort_keys=True) for d in definitions)
        return ToolOutput("\n".join(lines), data={"agents": agents,
                                                  "definitions": definitions})


def collab_tools() -> list[Tool]:
    """Fresh instances of the collaboration tools."""
    return [AgentTool(), SendMessageTool(), ListAgentsTool()]
