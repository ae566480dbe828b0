"""A turn's user extensions: approval of new workspace definitions, hooks, agent definition."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from openprogram_lsp.agents.definitions import AgentDef
from openprogram_lsp.approvals.rulebook import with_client_rules
from openprogram_lsp.core.errors import NotFound, ProviderError, TurnCancelled
from openprogram_lsp.core.turn_context import command_env
from openprogram_lsp.core.turn_root import real_path
from openprogram_lsp.hooks.approval import approve
from openprogram_lsp.hooks.engine import Definitions, TurnHooks
from openprogram_lsp.hooks.model_hook import HookModel
from openprogram_lsp.providers.base import Provider
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher.active import ActiveTurn
    from openprogram_lsp.dispatcher.services import Services

log = logging.getLogger(__name__)
T = TypeVar("T")

SUBAGENT_SOURCES = frozenset({"agent_spawn"})
PROMPT_SOURCES = frozenset({"user", "cli"})


def turn_definitions(services: Services, turn: ActiveTurn) -> Definitions | None:
    """The turn's hooks and agent definitions, read (stamped) once for the whole turn: its
    approval, its hooks, its agent definition and its system prompt all use these."""
    engine = services.hooks
    if engine is None:
        return None
    if turn.definitions is None:
        turn.definitions = engine.definitions(turn.workspace)
    return turn.definitions


async def start_hooks(services: Services, turn: ActiveTurn) -> TurnHooks | None:
    """Ask about new workspace definitions, then bind the hooks this turn runs."""
    s = services
    engine = s.hooks
    defs = turn_definitions(s, turn)
    if engine is None or defs is None:
        return None
    pending = engine.pending_definitions(turn.workspace, defs)
    once: frozenset[str] = frozenset()
    if pending:  # (nothing to ask: no question, no race against the cancel)
        once = await _until_cancel(approve(pending, workspace=turn.workspace, trust=engine.trust,
                                           approver=s.approver, session_id=turn.session_id,
                                           turn_id=turn.turn_id), turn.control.cancel)
    left = [p for p in pending
            if p.id not in once and engine.trust.state(turn.workspace, p.id) == "unknown"]
    if left:
        turn.warnings.append(
            f"{len(left)} workspace definition(s) await approval and were not used "
            f"({', '.join(p.id for p in left)}); approve them in the editor or with "
            "`openprogram-lsp hooks --trust ID`")
    mode = turn.request.permission_mode or s.permission_mode
    subagent = turn.request.source in SUBAGENT_SOURCES
    path = transcript_path(turn)

    rendered = engine.transcript(path, session_id=turn.session_id,
                                 cwd=str(real_path(turn.workspace)), sidechain=subagent)

    def render() -> None:
        rendered.write(turn.session.branch(turn.turn_id))

    hooks = engine.for_turn(
        workspace=turn.workspace, session_id=turn.session_id, turn_id=turn.turn_id, mode=mode,
        transcript_path=str(path), render_transcript=render,
        subagent=subagent, agent_id=turn.request.agent_id,
        rules=with_client_rules(s.rules_for(turn.workspace), turn.request.rules),
        cancel=turn.control.cancel, once=once, config=defs.config)
    turn.trusted_once = once
    hooks.warnings = turn.warnings  # a hook's systemMessage is shown with the result
    hooks.model_name = turn.model or ""
    hooks.env_file = str(turn.session.directory / "claude-env.sh")
    hooks.agent_type = str(turn.request.metadata.get("agentType") or "")
    hooks.halt = turn.control.request_cancel  # a hook's continue: false
    if subagent:
        hooks.notify("SubagentStart", str(turn.request.metadata.get("agentType") or ""),
                     agent_id=turn.request.agent_id or turn.turn_id,
                     agent_type=str(turn.request.metadata.get("agentType") or "general"))
    else:
        engine.active(turn.session_id)
        engine.remember(hooks)
        start = engine.session_start(turn.session_id, new=turn.request.session_id is None)
        if start is not None:
            hooks.start_context = await _until_cancel(hooks.session_start(start),
                                                      turn.control.cancel)
    command_env.set(engine.command_env(turn.session_id) or None)  # for its run_command calls
    if not subagent:
        later = engine.take_later(turn.session_id)  # what async hooks said since last turn
        if later:
            hooks.start_context = "\n".join(n for n in (hooks.start_context, later) if n)
    return hooks


def bind_model(hooks: TurnHooks | None, turn: ActiveTurn, provider: Provider,
               provider_for: Callable[[str], Provider], tools: ToolRegistry,
               ctx: ToolContext) -> None:
    """Give the turn's prompt and agent hooks their model and read-only tools (once the
    turn's model and tools are known; on the loop, whose thread the model runs on)."""
    if hooks is None or not any(h.type in ("prompt", "agent") for h in hooks.hooks):
        return
    hooks.model = HookModel(loop=asyncio.get_running_loop(), provider=provider,
                            provider_for=provider_for, tools=tools,
                            ctx=ToolContext(workspace=ctx.workspace, session_id=ctx.session_id,
                                            turn_id=turn.turn_id, cancel=ctx.cancel,
                                            settings=ctx.settings, buffers=ctx.buffers))


def stop_failure(exc: ProviderError) -> str:
    """A model call's failure as StopFailure's ``error`` (its matcher's subject): Claude
    Code's kinds, from the provider's HTTP status."""
    status = exc.status
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "authentication_failed"
    if status == 402:
        return "billing_error"
    if status is not None and 400 <= status < 500:
        return "invalid_request"
    if status is not None and status >= 500:
        return "server_error"
    return "unknown"


def transcript_path(turn: ActiveTurn) -> Path:
    """Where hooks read the turn's branch as Claude Code's transcript (our state root): one
    file for the session's own turns, one per child agent."""
    agent = turn.request.agent_id
    name = "main" if not agent else "agent-" + hashlib.sha256(agent.encode()).hexdigest()[:16]
    return turn.session.directory / "transcripts" / f"{name}.jsonl"


async def _until_cancel(aw: Coroutine[Any, Any, T], cancel: asyncio.Event) -> T:
    """Await ``aw`` unless the turn is cancelled first (then TurnCancelled)."""
    task = asyncio.ensure_future(aw)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
    if task.cancelled() or not task.done():
        raise TurnCancelled("turn cancelled")
    return task.result()


def agent_definition(services: Services, turn: ActiveTurn) -> AgentDef | None:
    """The agent definition a child turn runs under (``metadata.agentType``), if any."""
    name = turn.request.metadata.get("agentType")
    if not isinstance(name, str) or not name:
        return None
    defs = turn_definitions(services, turn)
    if defs is None:
        return None
    found = defs.agents.get(name)
    if found is None:
        raise NotFound(f"agent definition {name!r} no longer exists in {turn.workspace}")
    return found


def admitted_tools(tools: ToolRegistry, definition: AgentDef | None) -> ToolRegistry:
    """The tools a turn may use: all, or those the definition admits (disallowed first)."""
    if definition is None:
        return tools
    return tools.admitted(disabled=definition.disallowed, allowed=definition.tools)


def system_extra(services: Services, turn: ActiveTurn, definition: AgentDef | None,
                 tools: ToolRegistry) -> str:
    """What the system prompt gains: the definition's instructions, the usable definitions."""
    parts = [definition.prompt] if definition is not None and definition.prompt else []
    engine = services.hooks
    defs = turn_definitions(services, turn)
    if engine is not None and defs is not None and tools.get("agent") is not None:
        usable = [a for a in defs.agents.values()
                  if engine.definition_trust(turn.workspace, a) == "trusted"
                  or a.id in turn.trusted_once]
        if usable:
            parts.append("Agent definitions you can start with agent(agent=NAME, prompt=...):\n"
                         + "\n".join(f"- {a.name}: {a.description or '(no description)'}"
                                      for a in usable))
    return "\n\n".join(parts)
