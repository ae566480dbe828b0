"""Step 5 of a turn: prepare the context (auto-compacting if over budget), then run the loop."""

from __future__ import annotations

import logging

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.agent.loop import LoopHooks, LoopState, agent_loop
from openprogram_lsp.agent.prompts import system_prompt
from openprogram_lsp.agent.tool_exec import ToolRunner
from openprogram_lsp.context.engine import Summarizer
from openprogram_lsp.context.types import TurnPrep
from openprogram_lsp.core.types import Message, Node
from openprogram_lsp.dispatcher.services import Services
from openprogram_lsp.providers.base import ModelRequest, Provider, TextDelta

log = logging.getLogger(__name__)


def make_summarizer(provider: Provider, control: TurnControl) -> Summarizer:
    """A summariser that asks the session's own model, without tools."""

    async def summarize(messages: list[Message]) -> str:
        prompt = ("Summarise the conversation so far for your own later use: the user's goals "
                  "and instructions, decisions made, files touched and their state, and open "
                  "questions. Be concise and concrete.")
        req = ModelRequest(system=prompt, messages=[*messages, Message(role="user",
                                                                        content=prompt)],
                           tools=[], max_output_tokens=2048, cancel=control.cancel)
        out = []
        async for ev in provider.stream(req):
            if isinstance(ev, TextDelta):
                out.append(ev.text)
        return "".join(out)

    return summarize


async def prepare_context(services: Services, *, session_id: str, history: list[Node],
                          provider: Provider, runner: ToolRunner, control: TurnControl,
                          last_turn_at: str | None) -> TurnPrep:
    """Render history for the model and compact it when it is over budget."""
    engine = services.context
    system = system_prompt(str(runner.ctx.workspace))
    prep = engine.prepare(session_id=session_id, history=history, system=system,
                          tools=runner.tools.specs(), model=provider.model,
                          context_window=provider.context_window,
                          max_output_tokens=services.max_output_tokens,
                          last_turn_at=last_turn_at)
    if engine.should_auto_compact(prep):
        prep = await engine.auto_compact(prep, history=history,
                                         summarize=make_summarizer(provider, control))
    return prep


async def run_loop(services: Services, *, prep: TurnPrep, provider: Provider,
                   runner: ToolRunner, control: TurnControl, state: LoopState,
                   hooks: LoopHooks) -> LoopState:
    """Run the agent loop on the prepared messages (the prompt assembled once per loop)."""
    return await agent_loop(provider=provider, system=prep.system, messages=list(prep.messages),
                            runner=runner, bus=services.bus, control=control, state=state,
                            hooks=hooks, max_iterations=services.max_iterations,
                            max_output_tokens=services.max_output_tokens)
