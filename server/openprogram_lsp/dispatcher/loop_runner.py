"""Step 5 of a turn: prepare the context (auto-compacting if over budget), then run the loop."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.agent.edit_diagnostics import editor_diagnostics
from openprogram_lsp.agent.loop import LoopHooks, LoopState, agent_loop
from openprogram_lsp.agent.prompts import system_prompt
from openprogram_lsp.agent.tool_exec import ToolRunner
from openprogram_lsp.context.budget import resolve_window
from openprogram_lsp.context.instructions import load_instructions
from openprogram_lsp.context.types import Summarizer, SummaryRequest, TurnPrep
from openprogram_lsp.core.errors import TurnCancelled
from openprogram_lsp.core.images import image_rule, rule_for
from openprogram_lsp.core.types import Node, Usage
from openprogram_lsp.dispatcher.services import Services
from openprogram_lsp.events.bus import make_event
from openprogram_lsp.providers.base import ModelRequest, Provider, StreamEnd, TextDelta
from openprogram_lsp.store.session_handle import SessionHandle

log = logging.getLogger(__name__)


def make_summarizer(provider: Provider, control: TurnControl,
                    usage: list[Usage] | None = None) -> Summarizer:
    """A summariser that asks the session's own model, without tools and without extended
    thinking (usage collected)."""

    async def summarize(req: SummaryRequest) -> str:
        if control.cancelled:
            raise TurnCancelled("turn cancelled")
        mreq = ModelRequest(system=req.system, messages=list(req.messages), tools=[],
                            max_output_tokens=req.max_tokens, cancel=control.cancel,
                            thinking=False)
        out = []
        async for ev in provider.stream(mreq):
            if isinstance(ev, TextDelta):
                out.append(ev.text)
            elif isinstance(ev, StreamEnd) and usage is not None:
                usage.append(ev.usage)
            if control.cancelled:
                raise TurnCancelled("turn cancelled")
        return "".join(out)

    return summarize


def _total(used: list[Usage]) -> Usage:
    total = Usage()
    for u in used:
        total = total.add(u)
    return total


# Below this window the tools' descriptions are cut to their first sentence: their whole
# guidance (about 4,700 tokens for the built-ins) would take most of a small local model's
# window, leaving too little for the conversation to fit even after compaction.
BRIEF_TOOLS_BELOW = 32_768


def _prepare(services: Services, *, session: SessionHandle, history: Sequence[Node],
             provider: Provider,
             runner: ToolRunner, last_turn_at: str | None, system_extra: str = "") -> TurnPrep:
    # the window the budget will use (context.window overrides the model's): a small one gets
    # the brief prompt and the tools' first sentences
    window = resolve_window(provider.context_window, services.context.config.window_override)
    # images count by the provider's API's rule for the rest of the turn (its task's context)
    image_rule.set(rule_for(provider.name))
    system = system_prompt(str(runner.ctx.workspace), runner.tools.names(), window,
                           editor_diagnostics(runner.ctx))
    if system_extra:
        system = f"{system}\n{system_extra.strip()}\n"
    return services.context.prepare(
        session_id=session.id, history=history, system=system,
        tools=runner.tools.specs(brief=window < BRIEF_TOOLS_BELOW),
        model=provider.model,
        context_window=provider.context_window,
        max_output_tokens=getattr(provider, "max_output_tokens", services.max_output_tokens),
        last_turn_at=last_turn_at, summaries=session.summaries(history),
        bus=services.bus, instructions=load_instructions(runner.ctx.workspace))


async def prepare_context(services: Services, *, session: SessionHandle, history: Sequence[Node],
                          provider: Provider, runner: ToolRunner, control: TurnControl,
                          last_turn_at: str | None, system_extra: str = "") -> TurnPrep:
    """Render history for the model and compact it when it is over budget."""
    engine = services.context
    prep = _prepare(services, session=session, history=history, provider=provider,
                    runner=runner, last_turn_at=last_turn_at, system_extra=system_extra)
    if engine.should_auto_compact(prep):
        if runner.hooks is not None:
            await runner.hooks.observe("PreCompact", "auto", trigger="auto",
                                       custom_instructions="")
        used: list[Usage] = []
        before = prep
        prep = await engine.auto_compact(
            prep, history=history, summarize=make_summarizer(provider, control, used),
            persist=session.append, bus=services.bus)
        if used:
            prep.summarizer_usage = _total(used)
        if runner.hooks is not None and prep is not before and prep.summary_node_id:
            context = await _after_compaction(runner, session, prep, "auto")
            if context:  # with the prompt the model is about to read
                runner.hooks.start_context = "\n".join(
                    n for n in (runner.hooks.start_context, context) if n)
    services.bus.emit(make_event("context.usage", {
        "used_tokens": prep.estimate, "window_tokens": prep.context_window,
        "compactions": len(session.summaries(history)),
        "path": prep.path}, session_id=session.id, origin="context"))
    return prep


async def compact_command(services: Services, *, session: SessionHandle, history: Sequence[Node],
                          provider: Provider, runner: ToolRunner, control: TurnControl,
                          last_turn_at: str | None, state: LoopState,
                          system_extra: str = "") -> TurnPrep:
    """The ``/compact`` chat command: compact now, report it as the reply, no model reply."""
    used: list[Usage] = []
    prep = _prepare(services, session=session, history=history, provider=provider,
                    runner=runner, last_turn_at=last_turn_at, system_extra=system_extra)
    if runner.hooks is not None:
        await runner.hooks.observe("PreCompact", "manual", trigger="manual",
                                   custom_instructions="")
    new = await services.context.compact_now(
        prep, summarize=make_summarizer(provider, control, used),
        persist=session.append, bus=services.bus)
    for u in used:
        state.usage = state.usage.add(u)
    if used:
        new.summarizer_usage = _total(used)
    if runner.hooks is not None and new is not prep and new.summary_node_id:
        context = await _after_compaction(runner, session, new, "manual")
        if context:  # this turn has no model reply: the session's next prompt gets it
            runner.hooks.engine.later(session.id, context)
    if new.summary_node_id is None or new is prep:
        text = "Nothing to compact yet."
    else:
        how = ("a structural summary (the model could not summarise)"
               if "structural" in new.actions else "a summary written by the model")
        text = (f"Context compacted: {len(new.summarised)} earlier message(s) replaced by "
                f"{how}, about {prep.estimate} -> {new.estimate} tokens "
                f"(summary node {new.summary_node_id}).")
    state.steps.append(text)
    return new


async def _after_compaction(runner: ToolRunner, session: SessionHandle, prep: TurnPrep,
                            trigger: str) -> str | None:
    """PostCompact (with the summary), then SessionStart with ``source: compact``: what its
    hooks say for the model, as Claude Code re-injects context after a compaction."""
    hooks = runner.hooks
    assert hooks is not None and prep.summary_node_id is not None
    try:
        summary = session.node(prep.summary_node_id).text
    except Exception:  # the summary is told when it can be read
        summary = ""
    await hooks.observe("PostCompact", trigger, trigger=trigger, compact_summary=summary)
    return await hooks.session_start("compact")


async def run_loop(services: Services, *, prep: TurnPrep, provider: Provider,
                   runner: ToolRunner, control: TurnControl, state: LoopState,
                   hooks: LoopHooks) -> LoopState:
    """Run the agent loop on the prepared messages (shared with the prep, never copied)."""
    return await agent_loop(provider=provider, system=prep.system, messages=prep.transcript(),
                            runner=runner, bus=services.bus, control=control, state=state,
                            hooks=hooks, max_iterations=services.max_iterations,
                            max_output_tokens=prep.reply_tokens,
                            output_room=prep.reply_tokens_after)
