"""The scripted model: replays a JSON list of responses, one per model call, process-wide."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from openprogram_lsp.core.errors import ConfigError, ProviderError
from openprogram_lsp.core.ids import new_id
from openprogram_lsp.core.types import StopReason, Thought, ToolCall, Usage
from openprogram_lsp.providers.base import (
    ModelRequest,
    ProviderEvent,
    StreamEnd,
    TextDelta,
    ThoughtDelta,
    ThoughtReady,
    ToolCallReady,
)
from openprogram_lsp.providers.offline import estimate_tokens, split_deltas, tool_chars

SCRIPTED_STOPS: frozenset[StopReason] = frozenset({"end_turn", "tool_use", "max_tokens",
                                                   "refusal", "pause_turn"})
"""The ``stop`` a scripted response may give (the way a real model's response can end)."""

_cursors: dict[str, int] = {}
_cursor_lock = threading.Lock()


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"scripted model: no such file {str(path)!r}") from None
    except ValueError as exc:
        raise ConfigError(f"scripted model: {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise ConfigError(f"scripted model: {str(path)!r} must hold a JSON list of objects")
    return data


def reset_scripts() -> None:
    """Rewind every script (for tests)."""
    with _cursor_lock:
        _cursors.clear()


def _record(target: Path | None, request: ModelRequest) -> None:
    """Append what the model was sent to ``target`` (``scripted_log``; one JSON line a call)."""
    if target is None:
        return
    line = json.dumps({"system": request.system,
                       "messages": [m.model_dump(mode="json", exclude_none=True)
                                    for m in request.messages],
                       "tools": [t.name for t in request.tools]}, ensure_ascii=False)
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


class ScriptedProvider:
    """Replays responses in order across every session and turn of the process."""

    name = "scripted"
    context_window = 128_000

    def __init__(self, path: str, *, record: Path | None = None) -> None:
        self.path = Path(path).expanduser().resolve()
        self.record = record  # the ``scripted_log`` setting
        self.model = f"scripted:{self.path}"
        self.responses = _load(self.path)
        self.delay = float(next((r["delay"] for r in self.responses[:1] if "delay" in r), 0.0))

    def _next(self) -> dict[str, Any]:
        key = str(self.path)
        with _cursor_lock:
            i = _cursors.get(key, 0)
            if i >= len(self.responses):
                raise ProviderError(
                    f"script {key} is exhausted after {len(self.responses)} responses",
                    provider="scripted")
            _cursors[key] = i + 1
        return self.responses[i]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream the next scripted response: text in several deltas, then tool calls."""
        resp = self._next()
        _record(self.record, request)
        if "error" in resp:
            raise ProviderError(str(resp["error"]), provider="scripted")
        text = str(resp.get("text") or "")
        delay = float(resp.get("delay", 0.0))
        thought = str(resp.get("thought") or "")
        for piece in split_deltas(thought, 8):
            if piece:
                yield ThoughtDelta(piece)
                await asyncio.sleep(delay)
        if thought:
            yield ThoughtReady(Thought(text=thought, source="scripted", model=self.model))
        for piece in split_deltas(text, 8):
            if piece:
                yield TextDelta(piece)
                await asyncio.sleep(delay)
        calls = resp.get("tool_calls") or []
        for raw in calls:
            yield ToolCallReady(ToolCall(id=str(raw.get("id") or new_id("call_")),
                                         name=str(raw["name"]),
                                         arguments=dict(raw.get("arguments") or {})))
        prompt = request.system + "".join(m.content for m in request.messages)
        usage = resp.get("usage") or {}
        stop = resp.get("stop")
        prompt_tokens = estimate_tokens(prompt) + tool_chars(request.tools) // 4
        yield StreamEnd(stop if stop in SCRIPTED_STOPS else "tool_use" if calls else "end_turn",
                        Usage(input_tokens=int(usage.get("input_tokens", prompt_tokens)),
                              output_tokens=int(usage.get("output_tokens",
                                                          estimate_tokens(text)))))
