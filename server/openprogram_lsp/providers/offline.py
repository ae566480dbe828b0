"""The offline model: deterministic, no network, acting through the real tools.

It recognises ``write PATH`` + newline + content, ``read PATH``, ``list PATH``, ``run COMMAND`` and
``ask QUESTION``; anything else gets a short reply saying how to configure a real model.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence

from openprogram_lsp.core.ids import new_id
from openprogram_lsp.core.transcript import content_chars, without_environment
from openprogram_lsp.core.types import Message, ToolCall, ToolSpec, Usage
from openprogram_lsp.providers.base import (
    ModelRequest,
    ProviderEvent,
    StreamEnd,
    TextDelta,
    ToolCallReady,
)

HELP = (
    "I'm the offline model: I work without a network or API key and understand a few "
    "commands: `write PATH` (then the content on the next lines, or after the path on the "
    "same line), `read PATH`, `list PATH`, "
    "`run COMMAND` and `ask QUESTION`. To talk to a real model, set OPENPROGRAM_MODEL (for "
    "example `openai:gpt-4o-mini` with OPENAI_API_KEY, or `anthropic:claude-sonnet-4-5` with "
    "ANTHROPIC_API_KEY) or pass --model."
)

def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token)."""
    return max(1, (len(text) + 3) // 4)


_schema_chars: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], int]] = {}


def tool_chars(tools: Sequence[ToolSpec]) -> int:
    """Characters of the tool schemas a request offers (a real server counts them as prompt:
    without them the usage reported looks far below the context engine's estimate).
    Remembered for the same spec objects, which a registry hands out every turn."""
    specs = tuple(tools)
    key = tuple(map(id, specs))
    hit = _schema_chars.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], specs, strict=True)):
        return hit[1]
    n = sum(len(json.dumps({"name": t.name, "description": t.description,
                            "parameters": t.input_schema}, ensure_ascii=False)) for t in specs)
    if len(_schema_chars) >= 64:
        _schema_chars.clear()
    _schema_chars[key] = (specs, n)  # holding the specs keeps their ids from being reused
    return n


def split_deltas(text: str, size: int = 16) -> list[str]:
    """Split text into several stream deltas."""
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _split_path(line: str) -> tuple[str, str]:
    """``PATH rest`` or ``"PA TH" rest`` into the path and the rest."""
    if line[:1] in "\"'":
        end = line.find(line[0], 1)
        if end > 0:
            return line[1:end], line[end + 1:].strip()
    path, _, rest = line.partition(" ")
    return path, rest.strip()


def plan_reply(messages: Sequence[Message]) -> tuple[str, list[ToolCall]]:
    """Decide the next response from the conversation: text and at most one tool call."""
    last = messages[-1] if messages else Message(role="user", content="")
    if last.role == "tool":
        body = last.content.strip()
        if last.is_error:
            return f"The tool call failed: {body}", []
        if len(body) > 2000:
            body = body[:2000] + "\n…"
        return f"Done.\n\n```\n{body}\n```" if "\n" in body else f"Done: {body}", []
    text = without_environment(last.content)  # what the user typed, not the context's note
    head, _, rest = text.partition("\n")
    verb, _, arg = head.strip().partition(" ")
    verb, arg = verb.lower(), arg.strip()
    call_id = new_id("offline_")
    if verb == "write" and arg:
        if not rest and " " in arg:  # one line: `write PATH CONTENT` ("PATH" may be quoted)
            arg, rest = _split_path(arg)
        content = rest if rest.endswith("\n") or not rest else rest + "\n"
        return f"Writing {arg}.", [ToolCall(id=call_id, name="write_file",
                                            arguments={"path": arg, "content": content})]
    if verb == "read" and arg:
        return f"Reading {arg}.", [ToolCall(id=call_id, name="read_file", arguments={"path": arg})]
    if verb == "list":
        return f"Listing {arg or '.'}.", [ToolCall(id=call_id, name="list_dir",
                                                   arguments={"path": arg or "."})]
    if verb == "run" and arg:
        command = arg + ("\n" + rest if rest else "")
        return f"Running `{arg}`.", [ToolCall(id=call_id, name="run_command",
                                              arguments={"command": command})]
    if verb == "ask" and arg:
        return "", [ToolCall(id=call_id, name="ask_user", arguments={"question": arg})]
    return HELP, []


class OfflineProvider:
    """The default model when none is configured."""

    name = "offline"
    context_window = 128_000

    def __init__(self, model: str = "offline") -> None:
        self.model = model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream the planned reply as several deltas, then its tool call."""
        text, calls = plan_reply(request.messages)
        for piece in split_deltas(text):
            if piece:
                yield TextDelta(piece)
                await asyncio.sleep(0)
        for call in calls:
            yield ToolCallReady(call)
        # the size of the whole prompt, the carried history's from its count (not joined)
        prompt = len(request.system) + content_chars(request.messages) + tool_chars(request.tools)
        yield StreamEnd("tool_use" if calls else "end_turn",
                        Usage(input_tokens=max(1, (prompt + 3) // 4),
                              output_tokens=estimate_tokens(text)))
