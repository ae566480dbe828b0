"""The core loop: call the model, run its tool calls, feed results back, repeat."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from openprogram_lsp.agent import prompts
from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.agent.tool_exec import ToolRunner
from openprogram_lsp.core.errors import TurnCancelled
from openprogram_lsp.core.ids import new_id
from openprogram_lsp.core.transcript import Transcript
from openprogram_lsp.core.types import (
    Message,
    StopReason,
    Thought,
    ToolCall,
    ToolCallRecord,
    Usage,
)
from openprogram_lsp.events.bus import EventBus, make_event
from openprogram_lsp.providers.base import (
    WINDOW_FULL,
    ModelRequest,
    Provider,
    StreamEnd,
    TextDelta,
    ThoughtDelta,
    ThoughtReady,
    ToolCallCut,
    ToolCallReady,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_MAX_ITERATIONS = 50
MAX_PAUSES = 5  # ``pause_turn`` continuations in a row before the turn ends as it is
HALTING: frozenset[StopReason] = frozenset({"max_tokens", "refusal"})
"""Stops after which the response's tool calls are not run and the turn ends."""


@dataclass(slots=True)
class LoopState:
    """What the loop has produced so far (kept on error or cancel)."""

    steps: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "end_turn"
    model_calls: int = 0
    first_call_usage: Usage | None = None  # what the provider reported for the first call
    stop_detail: str | None = None  # the provider's word on the last stop (a refusal's reason)
    output_limit: int = 0  # the max_tokens each model call was sent
    cut_calls: int = 0  # tool calls the output limit cut mid-arguments
    thoughts: dict[int, list[Thought]] = field(default_factory=dict)  # by step: reasoning
    # user messages fed into the running turn (steering, follow-ups), with the index of the
    # step they came before, so the stored node renders exactly what the model saw
    interjections: list[dict[str, Any]] = field(default_factory=list)

    def interject(self, kind: str, text: str) -> Message:
        """Record a user message fed into the turn before the next step."""
        self.interjections.append({"beforeStep": len(self.steps), "kind": kind, "text": text})
        return Message(role="user", content=text)

    def stored_thoughts(self) -> list[dict[str, Any]]:
        """The reasoning of every step as the reply node's ``metadata.thoughts`` keeps it."""
        return [{"step": step, **t.model_dump(exclude_none=True)}
                for step in sorted(self.thoughts) for t in self.thoughts[step]]

    @property
    def text(self) -> str:
        """The reply: every step's text, joined."""
        return "\n\n".join(s for s in (x.strip("\n") for x in self.steps) if s)


@dataclass(slots=True)
class LoopHooks:
    """Callbacks the dispatcher uses to persist progress."""

    on_tool_finished: Callable[[ToolCallRecord], None] | None = None
    # before a call runs (the reply so far and the running call survive a crash)
    on_tool_started: Callable[[ToolCall, int], None] | None = None
    on_step_finished: Callable[[LoopState], None] | None = None
    # at wrap-up: a reason to keep going (a Stop hook refusing), or None to stop
    before_stop: Callable[[LoopState], Awaitable[str | None]] | None = None


def cut_usage(request: ModelRequest, said: str) -> Usage:
    """The usage of a model call cut before the provider reported it, counted from the text
    (about 4 characters a token): the request's system prompt, messages and tool schemas in,
    the text streamed so far out. Marked ``estimated``."""
    chars = len(request.system) + sum(
        len(m.content) + sum(len(str(c.arguments)) + len(c.name) for c in m.tool_calls)
        for m in request.messages) + len(str([t.input_schema for t in request.tools]))
    return Usage(input_tokens=(chars + 3) // 4, output_tokens=(len(said) + 3) // 4,
                 estimated=True)


async def _race(aw: Awaitable[T], cancel: asyncio.Event) -> T:
    """Await something, raising TurnCancelled as soon as the cancel event is set."""
    task = asyncio.ensure_future(aw)
    if cancel.is_set():
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise TurnCancelled("turn cancelled")
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        waiter.cancel()
        # let the cut work unwind first (an approval withdraws its prompt), so nothing it
        # emits can arrive after the turn's end
        await asyncio.wait({task}, timeout=10)
        raise
    if task in done:
        waiter.cancel()
        return task.result()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    raise TurnCancelled("turn cancelled")


def _keep_cancelled(state: LoopState, runner: ToolRunner, left: list[ToolCall],
                    step: int) -> None:
    """Record the calls a cancel cut (the running one, those not started), so the stored turn
    shows them as cancelled instead of dropping them."""
    for n, call in enumerate(left):
        cut = runner.cancelled
        if n == 0 and cut is not None and cut.id == call.id:
            state.tool_calls.append(cut)
            continue
        tool = runner.tools.get(call.name)
        title = call.name
        if tool is not None:
            with contextlib.suppress(Exception):  # bad arguments: the name will do
                title = tool.title(tool.parse(call.arguments))
        state.tool_calls.append(ToolCallRecord(
            id=call.id, name=call.name, kind=tool.kind if tool else "other",
            input=call.arguments, status="failed", cancelled=True, step=step, title=title,
            output=prompts.CANCELLED_CALL if n == 0 else prompts.NOT_RUN_CANCELLED))


def stop_warning(state: LoopState) -> str | None:
    """What the user is told when the model's reply ended at the output limit or in a
    refusal (None otherwise)."""
    if state.stop_reason == "max_tokens":
        what = ("; a tool call was cut while its arguments were written and was not run"
                if state.cut_calls else "")
        if state.stop_detail == WINDOW_FULL:  # the next turn compacts before it goes on
            return (f"the reply was cut: {WINDOW_FULL}{what}. Send \"continue\" to let it go "
                    f"on after the conversation is compacted (/compact does it now).")
        return (f"the reply was cut: the model reached its output limit of "
                f"{state.output_limit} tokens{what}. Send \"continue\" to let it go on.")
    if state.stop_reason == "refusal":
        why = f": {state.stop_detail}" if state.stop_detail else ""
        return (f"the model declined to go on (refusal){why}. Rephrase the request (edit it "
                f"or fork from an earlier message): the same conversation may be refused again.")
    return None


def _not_run(state: LoopState, emit: Callable[[str, dict[str, Any]], None],
             runner: ToolRunner, ready: list[ToolCall], cut: list[ToolCallCut],
             step: int) -> list[ToolCall]:
    """Record the calls of a response that ended at the output limit or in a refusal: none
    runs (a cut call's arguments are incomplete, and the others were written by a reply that
    never finished), each is shown failed with why, so the model is told on the next turn.
    Returns the calls as the transcript keeps them (a cut call with no arguments)."""
    why = (prompts.CUT_BY_LIMIT.format(limit=state.output_limit)
           if state.stop_reason == "max_tokens" else prompts.NOT_RUN_REFUSED)
    kept: list[ToolCall] = []
    for call, partial in [*((c, None) for c in ready),
                          *((ToolCall(id=new_id("call_"), name=c.name or "unknown"), c.partial)
                            for c in cut)]:
        tool = runner.tools.get(call.name)
        output = why
        if partial is not None:
            state.cut_calls += 1
            output = prompts.CUT_CALL.format(limit=state.output_limit, chars=len(partial))
        record = ToolCallRecord(id=call.id, name=call.name, kind=tool.kind if tool else "other",
                                input=call.arguments, status="failed", step=step,
                                title=call.name, output=output)
        emit("tool.started", {"tool_call_id": call.id, "name": call.name, "kind": record.kind,
                              "title": record.title, "input": call.arguments})
        emit("tool.finished", {"tool_call_id": call.id, "status": "failed", "output": output})
        state.tool_calls.append(record)
        kept.append(call)
    return kept


async def agent_loop(*, provider: Provider, system: str, messages: list[Message] | Transcript,
                     runner: ToolRunner, bus: EventBus, control: TurnControl,
                     state: LoopState | None = None, hooks: LoopHooks | None = None,
                     max_iterations: int = DEFAULT_MAX_ITERATIONS,
                     max_output_tokens: int = 4096,
                     output_room: Callable[[Sequence[Message]], int] | None = None
                     ) -> LoopState:
    """Drive the model-tool loop to completion; raises TurnCancelled or ProviderError.

    ``state`` is filled in place so the caller keeps partial text when this raises.
    ``messages`` gets the loop's replies and tool results appended (a ``Transcript``: the
    prepared history is shared, not copied). ``output_room``, given the messages the turn
    added so far, says how many output tokens the next call may ask for (the window left after
    the turn's own tool traffic); without it every call asks for ``max_output_tokens``.
    """
    state = state if state is not None else LoopState()
    state.output_limit = max_output_tokens
    hooks = hooks or LoopHooks()
    pauses = 0
    specs = runner.tools.specs()
    sid, tid = runner.ctx.session_id, runner.ctx.turn_id

    def emit(type: str, payload: dict[str, Any]) -> None:
        bus.emit(make_event(type, payload, session_id=sid, turn_id=tid, origin="agent"))

    while True:
        if control.cancelled:
            raise TurnCancelled("turn cancelled")
        if state.model_calls >= max_iterations:
            note = prompts.ITERATION_CAP.format(cap=max_iterations)
            state.steps.append(note)
            emit("text.delta", {"text": f"\n\n{note}"})
            state.stop_reason = "max_iterations"
            break
        state.model_calls += 1
        step = len(state.steps)
        state.steps.append("")
        calls: list[ToolCall] = []
        cut: list[ToolCallCut] = []
        emit("model.response_started", {"model": provider.model, "step": step})
        if output_room is not None:
            added = messages.added if isinstance(messages, Transcript) else []
            state.output_limit = output_room(added)
        request = ModelRequest(system=system, messages=messages, tools=specs,
                               max_output_tokens=state.output_limit, cancel=control.cancel)

        ended: list[bool] = []  # the call's StreamEnd (with its usage) arrived

        async def consume(step: int = step, calls: list[ToolCall] = calls,
                          cut: list[ToolCallCut] = cut, request: ModelRequest = request,
                          ended: list[bool] = ended) -> None:
            async for ev in provider.stream(request):
                if isinstance(ev, TextDelta):
                    state.steps[step] += ev.text
                    emit("text.delta", {"text": ev.text})
                elif isinstance(ev, ThoughtDelta):  # shown apart, never part of the reply
                    emit("thought.delta", {"text": ev.text})
                elif isinstance(ev, ThoughtReady):
                    state.thoughts.setdefault(step, []).append(ev.thought)
                elif isinstance(ev, ToolCallReady):
                    # Providers reuse ids (a restarted offline model, "call_0" every step); the
                    # server's own id is unique for the session's life, and editors key on it.
                    calls.append(ev.call.model_copy(update={"id": new_id("call_")}))
                elif isinstance(ev, ToolCallCut):
                    cut.append(ev)
                elif isinstance(ev, StreamEnd):
                    ended.append(True)
                    state.usage = state.usage.add(ev.usage)
                    if state.first_call_usage is None:
                        state.first_call_usage = ev.usage
                    state.stop_reason = ev.stop_reason
                    state.stop_detail = ev.detail

        try:
            await _race(consume(), control.cancel)
        except (TurnCancelled, asyncio.CancelledError):
            if not ended:  # cut before the provider reported usage: count what was sent and said
                state.usage = state.usage.add(cut_usage(request, state.steps[step]))
            raise
        emit("model.response_completed", {"model": provider.model, "step": step,
                                          "tool_calls": len(calls) + len(cut),
                                          "stop_reason": state.stop_reason})
        halted = state.stop_reason in HALTING
        if halted and (calls or cut):
            calls = _not_run(state, emit, runner, calls, cut, step)
            messages.append(Message(role="assistant", content=state.steps[step],
                                    tool_calls=calls, thoughts=state.thoughts.get(step, [])))
            messages.extend(Message(role="tool", content=r.output or "", tool_call_id=r.id,
                                    name=r.name, is_error=True)
                            for r in state.tool_calls[-len(calls):])
        else:
            messages.append(Message(role="assistant", content=state.steps[step],
                                    tool_calls=calls, thoughts=state.thoughts.get(step, [])))
        if hooks.on_step_finished:
            hooks.on_step_finished(state)
        if halted:
            break
        if state.stop_reason == "pause_turn" and not calls and pauses < MAX_PAUSES:
            pauses += 1  # the server paused a long turn: sent back as it is, it goes on
            continue
        pauses = 0
        if not calls:
            steering = control.take_steering()
            if steering:
                messages.extend(state.interject("steer", s) for s in steering)
                continue
            follow = control.take_follow_up()
            if follow is not None:
                messages.append(state.interject("follow_up", follow))
                continue
            if hooks.before_stop is not None:
                reason = await _race(hooks.before_stop(state), control.cancel)
                if reason:
                    emit("hook.stop_refused", {"reason": reason, "step": step})
                    messages.append(state.interject("stop_hook", reason))
                    continue
            break
        for i, call in enumerate(calls):
            if hooks.on_tool_started:
                hooks.on_tool_started(call, step)
            try:
                record, out = await _race(runner.run(call, step), control.cancel)
            except TurnCancelled:
                _keep_cancelled(state, runner, calls[i:], step)
                raise
            state.tool_calls.append(record)
            messages.append(Message(role="tool", content=out.text, tool_call_id=call.id,
                                    name=call.name, is_error=out.is_error,
                                    images=record.images or []))
            if hooks.on_tool_finished:
                hooks.on_tool_finished(record)
            if control.has_steering:
                for skipped in calls[i + 1:]:
                    rec = ToolCallRecord(id=skipped.id, name=skipped.name,
                                         input=skipped.arguments, status="failed",
                                         output=prompts.SKIPPED_FOR_STEERING, step=step)
                    state.tool_calls.append(rec)
                    messages.append(Message(role="tool", content=prompts.SKIPPED_FOR_STEERING,
                                            tool_call_id=skipped.id, name=skipped.name,
                                            is_error=True))
                messages.extend(state.interject("steer", s) for s in control.take_steering())
                break
    return state
