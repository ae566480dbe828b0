"""Running ``prompt`` and ``agent`` hooks: a model judges the event and answers yes or no.

As in Claude Code, the hook's ``prompt`` gets the event's JSON where it says ``$ARGUMENTS``
(appended when it does not), and the model answers ``{"ok": true}`` or ``{"ok": false,
"reason": "..."}``. A ``prompt`` hook is one model call without tools; an ``agent`` hook may
first look around the workspace with the read-only tools (``read_file``, ``grep``,
``find_files``, ``list_dir``: inside the workspace only, never asking, never writing), for at
most ``MAX_STEPS`` model calls. ``ok: false`` is read as a command hook's exit 2 with the
reason on stderr (a PreToolUse denial, a blocked prompt, a Stop hook's "keep going", feedback
after a tool); ``ok: true`` as a silent exit 0 (no opinion: a model's yes never skips the
user's approval). An answer that is not that JSON, a failed model call or the timeout is a
non-blocking error, as a crashed command is.

The model runs on the server's event loop; hooks run on worker threads, which hand the call
to the loop and wait for it (bounded by the hook's timeout and the turn's cancel).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.core.types import Message, Thought, ToolCall
from openprogram_lsp.hooks.config import HookSpec
from openprogram_lsp.hooks.runner import POLL, HookRun
from openprogram_lsp.providers.base import (
    ModelRequest,
    Provider,
    TextDelta,
    ThoughtReady,
    ToolCallReady,
)
from openprogram_lsp.tools.base import ToolContext, ToolOutput
from openprogram_lsp.tools.registry import ToolRegistry

MAX_STEPS = 50  # model calls of one agent hook (as Claude Code's)
AGENT_TOOLS = ("read_file", "grep", "find_files", "list_dir")
TOOL_RESULT_CHARS = 20_000  # of one tool result the agent hook's model reads
MAX_PAYLOAD_CHARS = 60_000  # of the event's JSON put in the prompt

SYSTEM = (
    "You are a hook of a coding agent: you judge one event of its session against the "
    "condition you are given. The event is JSON (its tool call, prompt or last message). "
    "Answer with exactly one JSON object and nothing else: {\"ok\": true} when the condition "
    "is met and the agent may go on, or {\"ok\": false, \"reason\": \"...\"} when it is not, "
    "the reason saying what is wrong in a sentence the agent can act on.")
AGENT_SYSTEM = SYSTEM + (
    " Before you answer you may read the workspace with the tools you have (read only). "
    "Your last message must be the JSON object.")


def judge_prompt(hook: HookSpec, payload: dict[str, Any]) -> str:
    """The hook's prompt with the event's JSON in place of ``$ARGUMENTS`` (or after it)."""
    event = json.dumps(payload, default=str, ensure_ascii=False)[:MAX_PAYLOAD_CHARS]
    if "$ARGUMENTS" in hook.command:
        return hook.command.replace("$ARGUMENTS", event)
    return f"{hook.command}\n\nThe event:\n{event}"


_FENCE = re.compile(r"^```[a-z]*\s*|\s*```$")


def verdict(text: str) -> tuple[bool, str] | None:
    """``(ok, reason)`` from a model's answer, or None when it gave no such JSON object."""
    body = _FENCE.sub("", text.strip())
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(body[start:end + 1])
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("ok"), bool):
        return None
    reason = data.get("reason")
    return data["ok"], reason.strip() if isinstance(reason, str) else ""


@dataclass(slots=True)
class HookModel:
    """What a turn's prompt and agent hooks ask: its model (or the one a hook names), its
    read-only tools and the loop the model runs on."""

    loop: asyncio.AbstractEventLoop
    provider: Provider  # the turn's model
    provider_for: Callable[[str], Provider]  # a model spec a hook names
    tools: ToolRegistry  # the turn's tools; agent hooks use AGENT_TOOLS of them
    ctx: ToolContext
    thread: int = field(default_factory=threading.get_ident)  # the loop's (made on it)

    def model_of(self, hook: HookSpec) -> Provider:
        """The hook's ``model`` when it is one of our specs (``anthropic:…``, ``offline``);
        Claude Code's names (``haiku``, ``claude-…``) mean the turn's model."""
        if hook.model and (":" in hook.model or hook.model == "offline"):
            return self.provider_for(hook.model)
        return self.provider

    def run(self, hook: HookSpec, payload: dict[str, Any], *,
            cancelled: Callable[[], bool] | None = None) -> HookRun:
        """Judge the event (blocking: called on a hook's worker thread, never the loop's)."""
        start = time.monotonic()

        def done(code: int | None, stderr: str = "", **kw: Any) -> HookRun:
            return HookRun(hook, code, "", stderr, time.monotonic() - start, **kw)

        if threading.get_ident() == self.thread:
            return done(None, error="cannot ask the model from the event loop's own thread")
        try:
            provider = self.model_of(hook)
        except OpenProgramError as exc:
            return done(None, error=f"has no model: {exc.message}")
        cancel = asyncio.Event()
        future: Future[str] = asyncio.run_coroutine_threadsafe(
            self._ask(hook, payload, provider, cancel), self.loop)
        deadline = start + hook.timeout
        while True:
            try:
                text = future.result(timeout=POLL)
                break
            except FutureTimeout:
                stop = cancelled is not None and cancelled()
                if stop or time.monotonic() >= deadline:
                    self.loop.call_soon_threadsafe(cancel.set)
                    future.cancel()
                    return done(None, timed_out=not stop, cancelled=stop)
            except OpenProgramError as exc:
                return done(None, error=f"model call failed: {exc.message}")
            except Exception as exc:
                return done(None, error=f"model call failed: {type(exc).__name__}: {exc}")
        answer = verdict(text)
        if answer is None:
            shown = " ".join(text.split())[:200] or "(nothing)"
            return done(None, error=f"answered no {{\"ok\": ...}} JSON: {shown}")
        ok, reason = answer
        if ok:
            return done(0)
        return done(2, reason or f"a {hook.type} hook answered ok: false")

    async def _ask(self, hook: HookSpec, payload: dict[str, Any], provider: Provider,
                   cancel: asyncio.Event) -> str:
        agent = hook.type == "agent"
        tools = [t for name in AGENT_TOOLS if agent and (t := self.tools.get(name)) is not None]
        specs = [t.spec() for t in tools]
        by_name = {t.name: t for t in tools}
        messages = [Message(role="user", content=judge_prompt(hook, payload))]
        for _ in range(MAX_STEPS if agent else 1):
            text: list[str] = []
            calls: list[ToolCall] = []
            thoughts: list[Thought] = []
            request = ModelRequest(system=AGENT_SYSTEM if agent else SYSTEM,
                                   messages=messages, tools=specs, max_output_tokens=1024,
                                   cancel=cancel)
            async for ev in provider.stream(request):
                if isinstance(ev, TextDelta):
                    text.append(ev.text)
                elif isinstance(ev, ToolCallReady):
                    calls.append(ev.call)
                elif isinstance(ev, ThoughtReady):
                    thoughts.append(ev.thought)
            if not calls or not agent:
                return "".join(text)
            messages.append(Message(role="assistant", content="".join(text), tool_calls=calls,
                                    thoughts=thoughts))
            for call in calls:
                out = await self._tool(by_name, call)
                messages.append(Message(role="tool", content=out.text[:TOOL_RESULT_CHARS],
                                        tool_call_id=call.id, name=call.name,
                                        is_error=out.is_error))
        return ""  # no verdict within MAX_STEPS

    async def _tool(self, tools: dict[str, Any], call: ToolCall) -> ToolOutput:
        tool = tools.get(call.name)
        if tool is None:
            return ToolOutput(f"no tool {call.name!r} here; use {', '.join(tools)}", True)
        try:
            return await tool.run(tool.parse(call.arguments), self.ctx)  # type: ignore[no-any-return]
        except OpenProgramError as exc:
            return ToolOutput(exc.message, True)
        except OSError as exc:
            return ToolOutput(f"{call.name} failed: {exc.strerror or exc}", True)
