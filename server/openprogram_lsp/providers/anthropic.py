"""``anthropic:MODEL``: the Anthropic Messages API, streamed over SSE, with prompt caching."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from openprogram_lsp.core.errors import ProviderError
from openprogram_lsp.core.images import load_base64
from openprogram_lsp.core.types import (
    ImagePart,
    Message,
    StopReason,
    Thought,
    ToolCall,
    ToolSpec,
    Usage,
)
from openprogram_lsp.providers.base import (
    WINDOW_FULL,
    ModelRequest,
    ProviderEvent,
    StreamEnd,
    TextDelta,
    ThoughtDelta,
    ThoughtReady,
    ToolCallCut,
    ToolCallReady,
)
from openprogram_lsp.providers.driver import HttpCall, stream_events
from openprogram_lsp.providers.endpoint import HttpProvider
from openprogram_lsp.providers.images import ANTHROPIC as ANTHROPIC_LIMITS
from openprogram_lsp.providers.images import check_images, fitted_ahead, omitted
from openprogram_lsp.providers.models import MIN_BUDGET
from openprogram_lsp.providers.openai import parse_arguments

NAME = "anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
OFFICIAL_HOST = "api.anthropic.com"
KEY_ENV = "ANTHROPIC_API_KEY"
BASE_ENV = "ANTHROPIC_BASE_URL"
API_VERSION = "2023-06-01"
CACHE_TYPE = "ephemeral"
MAX_BREAKPOINTS = 4
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"  # thinking between tool calls, Claude 4

_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "model_context_window_exceeded": "max_tokens",
}
_THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
_RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def thought_block(t: Thought) -> dict[str, Any]:
    """A thinking block exactly as the API sent it (its signature unchanged)."""
    if t.redacted is not None:
        return {"type": "redacted_thinking", "data": t.redacted}
    return {"type": "thinking", "thinking": t.text, "signature": t.signature or ""}


def _image_block(part: ImagePart) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": part.media_type,
                                        "data": load_base64(part.sha256)}}


def _blocks(m: Message, model: str | None = None, sees: bool = False,
            ) -> tuple[str, list[dict[str, Any]]]:
    """One neutral message as an Anthropic role and content blocks (an assistant's thinking
    blocks first, those ``model`` wrote, when ``model`` is given; a user message's images
    before its text, a tool result's after; for a model that does not see, a note each)."""
    if m.role == "tool":
        result: str | list[dict[str, Any]] = m.content or "(no output)"
        if m.images and sees:
            result = [_text_block(m.content or "(no output)"), *map(_image_block, m.images)]
        elif m.images:
            result = omitted(m)
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or "",
                                 "content": result}
        if m.is_error:
            block["is_error"] = True
        return "user", [block]
    if m.role == "assistant":
        blocks = [thought_block(t) for t in m.thoughts
                  if model is not None and t.source == NAME and t.model == model
                  and (t.signature or t.redacted is not None)]
        blocks += [_text_block(m.content)] if m.content.strip() else []
        blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                   for c in m.tool_calls]
        return "assistant", blocks
    if m.images and not sees:
        return "user", [_text_block(omitted(m))]
    images = [_image_block(i) for i in m.images]
    return "user", [*images, _text_block(m.content if m.content.strip() else "(empty message)")]


def encode_messages(messages: Sequence[Message], thinking_of: str | None = None,
                    sees: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """Neutral messages as Messages API turns: extra system text, then alternating turns
    (with the thinking blocks ``thinking_of``, a model, wrote: sent when thinking is on).

    Consecutive same-role messages merge into one turn (tool results first), because the API
    wants every tool result of an assistant turn in the single user turn that follows it.
    """
    extra_system: list[str] = []
    turns: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            if m.content.strip():
                extra_system.append(m.content)
            continue
        role, blocks = _blocks(m, thinking_of, sees)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            merged = turns[-1]["content"] + blocks
            merged.sort(key=lambda b: b["type"] != "tool_result")
            turns[-1]["content"] = merged
        else:
            turns.append({"role": role, "content": blocks})
    return "\n\n".join(extra_system), turns


def encode_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs as Messages API tools."""
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools]


def mark_cache(system: list[dict[str, Any]], tools: list[dict[str, Any]],
               turns: list[dict[str, Any]]) -> None:
    """Put cache breakpoints on the stable prefix: tools, system, the last turns.

    The last turn is marked so the next call of the same loop reads it from the cache; the
    turn that ended the previous call (the one before the last assistant turn) is marked too,
    so the prefix written last time is still found when several blocks were added since.
    """
    marks = 0
    if tools:
        tools[-1]["cache_control"] = {"type": CACHE_TYPE}
        marks += 1
    if system:
        system[-1]["cache_control"] = {"type": CACHE_TYPE}
        marks += 1
    targets: list[int] = []
    if turns:
        targets.append(len(turns) - 1)
        last_assistant = max((i for i, t in enumerate(turns) if t["role"] == "assistant"),
                             default=-1)
        if last_assistant > 0 and last_assistant - 1 not in targets:
            targets.append(last_assistant - 1)
    for i in targets:
        if marks >= MAX_BREAKPOINTS:
            break
        block = next((b for b in reversed(turns[i]["content"])
                      if b["type"] not in _THINKING_BLOCKS), None)
        if block is None:  # a turn of thinking blocks only: they take no breakpoint
            continue
        block["cache_control"] = {"type": CACHE_TYPE}
        marks += 1


@dataclass(slots=True)
class _Block:
    type: str
    id: str = ""
    name: str = ""
    json: list[str] = field(default_factory=list)
    input: dict[str, Any] = field(default_factory=dict)
    stopped: bool = False  # its content_block_stop came
    thinking: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    data: str | None = None  # redacted_thinking
    bad: ProviderError | None = None  # its arguments did not parse (cut, or malformed)


class MessagesDecoder:
    """Decodes Messages API stream events into text, tool calls, usage and the stop reason."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model  # named on the thoughts it decodes
        self.reset()

    def reset(self) -> None:
        """Forget everything decoded so far."""
        self.usage = Usage()
        self._raw_usage: dict[str, int] = {}
        self.blocks: dict[int, _Block] = {}
        self.stop_reason: str | None = None
        self.stop_detail: str | None = None  # a refusal's explanation (``stop_details``)
        self.started = False
        self.done = False

    def feed(self, event: str, data: str) -> list[ProviderEvent]:
        """Decode one SSE event."""
        try:
            obj = json.loads(data)
        except ValueError:
            raise ProviderError(f"malformed JSON in the stream: {data[:200]!r}",
                                provider=NAME) from None
        if not isinstance(obj, dict):
            raise ProviderError(f"malformed event in the stream: {data[:200]!r}", provider=NAME)
        kind = obj.get("type", event)
        if kind == "content_block_delta":
            return self._delta(obj)
        if kind == "message_start":
            self.started = True
            message = obj.get("message") or {}
            self._merge_usage(message.get("usage"))
        elif kind == "content_block_start":
            return self._start(obj)
        elif kind == "content_block_stop":
            return self._stop(obj)
        elif kind == "message_delta":
            delta = obj.get("delta") or {}
            if delta.get("stop_reason"):
                self.stop_reason = str(delta["stop_reason"])
            details = delta.get("stop_details") or obj.get("stop_details")
            if isinstance(details, dict) and details.get("explanation"):
                self.stop_detail = str(details["explanation"])
            self._merge_usage(obj.get("usage"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            err = obj.get("error") or {}
            etype = str(err.get("type") or "error")
            raise ProviderError(f"error in the stream: {err.get('message') or etype} ({etype})",
                                provider=NAME, retryable=etype in _RETRYABLE_ERRORS)
        # ping and event types added later are ignored, as the API asks.
        return []

    def _start(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        block = obj.get("content_block") or {}
        idx = int(obj.get("index", len(self.blocks)))
        b = _Block(type=str(block.get("type", "")), id=str(block.get("id", "")),
                   name=str(block.get("name", "")))
        if isinstance(block.get("input"), dict):
            b.input = block["input"]
        self.blocks[idx] = b
        if b.type == "redacted_thinking":
            b.data = str(block.get("data") or "")
        elif b.type == "thinking":
            if block.get("thinking"):
                b.thinking.append(str(block["thinking"]))
                return [ThoughtDelta(str(block["thinking"]))]
            if block.get("signature"):
                b.signature.append(str(block["signature"]))
        text = block.get("text") if b.type == "text" else None
        return [TextDelta(str(text))] if text else []

    def _delta(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        delta = obj.get("delta") or {}
        dtype = delta.get("type")
        if dtype == "text_delta":
            text = delta.get("text")
            return [TextDelta(str(text))] if text else []
        if dtype in ("thinking_delta", "signature_delta"):
            b = self.blocks.get(int(obj.get("index", -1)))
            if b is None or b.type != "thinking":
                raise ProviderError(f"malformed stream: {dtype} outside a thinking block",
                                    provider=NAME)
            if dtype == "signature_delta":
                b.signature.append(str(delta.get("signature") or ""))
                return []
            piece = str(delta.get("thinking") or "")
            b.thinking.append(piece)
            return [ThoughtDelta(piece)] if piece else []
        if dtype == "input_json_delta":
            b = self.blocks.get(int(obj.get("index", -1)))
            if b is None:
                raise ProviderError("malformed stream: input_json_delta for an unknown block",
                                    provider=NAME)
            b.json.append(str(delta.get("partial_json") or ""))
        return []

    def _stop(self, obj: dict[str, Any]) -> list[ProviderEvent]:
        b = self.blocks.get(int(obj.get("index", -1)))
        if b is not None and b.type in _THINKING_BLOCKS:
            b.stopped = True
            return [ThoughtReady(Thought(
                text="".join(b.thinking), source=NAME, model=self.model,
                signature="".join(b.signature) if b.type == "thinking" else None,
                redacted=b.data))]
        if b is None or b.type != "tool_use":
            return []
        if not b.name:
            raise ProviderError("the model sent a tool call without a name", provider=NAME)
        b.stopped = True
        try:
            args = (parse_arguments("".join(b.json), b.name, NAME) if b.json else b.input)
        except ProviderError as exc:  # cut by max_tokens, or malformed: finish() tells
            b.bad = exc
            return []
        return [ToolCallReady(ToolCall(id=b.id, name=b.name, arguments=args))]

    def _merge_usage(self, raw: Any) -> None:
        if not isinstance(raw, dict):
            return
        for key in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                    "cache_creation_input_tokens"):
            if isinstance(raw.get(key), int):
                self._raw_usage[key] = raw[key]
        u = self._raw_usage
        read = u.get("cache_read_input_tokens")
        write = u.get("cache_creation_input_tokens")
        # input_tokens counts the whole prompt, cached parts included (see docs/decisions).
        self.usage = Usage(input_tokens=u.get("input_tokens", 0) + (read or 0) + (write or 0),
                           output_tokens=u.get("output_tokens", 0),
                           cache_read_tokens=read, cache_write_tokens=write)

    def finish(self) -> list[ProviderEvent]:
        """The StreamEnd; an error when the stream ended before ``message_stop``."""
        if not self.done:
            raise ProviderError("the stream ended before the response was complete",
                                provider=NAME, retryable=True)
        stop = _STOP.get(self.stop_reason or "", "end_turn")
        out: list[ProviderEvent] = []
        for b in self.blocks.values():
            if b.type != "tool_use" or (b.stopped and b.bad is None):
                continue
            if stop != "max_tokens":  # a call left unfinished without the limit to blame
                raise b.bad or ProviderError(f"the model's tool call {b.name!r} never ended",
                                             provider=NAME)
            out.append(ToolCallCut(b.id, b.name, "".join(b.json)))
        if stop == "end_turn" and any(b.type == "tool_use" for b in self.blocks.values()):
            stop = "tool_use"
        detail = (self.stop_detail if stop == "refusal" else WINDOW_FULL
                  if self.stop_reason == "model_context_window_exceeded" else None)
        out.append(StreamEnd(stop, self.usage, detail))
        return out


class AnthropicProvider(HttpProvider):
    """Streams responses from the Anthropic Messages API."""

    name = NAME
    BASE_ENV, KEY_ENV, DEFAULT_BASE_URL = BASE_ENV, KEY_ENV, DEFAULT_BASE_URL
    OFFICIAL_HOST, HINT = OFFICIAL_HOST, "a compatible server"

    @property
    def url(self) -> str:
        """The messages endpoint (the base URL may or may not end in ``/v1``)."""
        base = self.base_url
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def thinking(self, max_tokens: int) -> dict[str, Any] | None:
        """The ``thinking`` parameter the model's table entry asks for (None: no thinking), with
        its ``display`` where the table sets one (Opus 4.7 and later send no thinking text
        unless asked for ``summarized``)."""
        info = self.info
        if not info.thinking:
            return None
        shown = {"display": info.display} if info.display else {}
        if info.reasoning == "adaptive":
            return {"type": "adaptive", **shown}
        if info.reasoning == "budget":
            budget = info.budget_tokens or MIN_BUDGET
            if budget >= max_tokens and not info.interleaved:
                budget = max_tokens // 2  # the budget must stay below max_tokens
            return {"type": "enabled", "budget_tokens": budget, **shown} \
                if budget >= MIN_BUDGET else None
        return None

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of one streaming Messages request, cache breakpoints included."""
        thinking = self.thinking(request.max_output_tokens) if request.thinking else None
        sees, messages = check_images(request.messages, provider=NAME, model=self.model,
                                      sees=self.info.images, limits=ANTHROPIC_LIMITS)
        extra, turns = encode_messages(messages,
                                       self.model if thinking is not None else None, sees)
        system_text = "\n\n".join(s for s in (request.system, extra) if s.strip())
        system = [_text_block(system_text)] if system_text else []
        tools = encode_tools(request.tools)
        mark_cache(system, tools, turns)
        body: dict[str, Any] = {"model": self.model, "max_tokens": request.max_output_tokens,
                                "messages": turns, "stream": True}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = tools
        if thinking is not None:
            body["thinking"] = thinking
            if thinking["type"] == "adaptive" and self.info.effort:
                body["output_config"] = {"effort": self.info.effort}
        return body

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream the response to a request as provider events (the downscaled copies of
        images it needs made first, off the event loop, when they are not made yet)."""
        ahead = fitted_ahead(request.messages, sees=self.info.images, limits=ANTHROPIC_LIMITS,
                             then=lambda: self._stream(request))
        return ahead if ahead is not None else self._stream(request)

    def _stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        headers = {"accept": "text/event-stream", "anthropic-version": API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        body = self.build_body(request)
        if body.get("thinking", {}).get("type") == "enabled" and self.info.interleaved:
            headers["anthropic-beta"] = INTERLEAVED_BETA
        call = HttpCall(provider=NAME, url=self.url, body=body,
                        headers=headers, key_env=KEY_ENV, has_key=bool(self._api_key),
                        secrets=(self._api_key,), base_env=BASE_ENV)
        return stream_events(call, MessagesDecoder(self.model), self.settings, request.cancel)
