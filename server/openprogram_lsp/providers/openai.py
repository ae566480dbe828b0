"""``openai:MODEL``: any OpenAI-compatible Chat Completions server, streamed over SSE."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from openprogram_lsp.core.errors import ProviderError
from openprogram_lsp.core.ids import new_id
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
from openprogram_lsp.providers.images import OPENAI as OPENAI_LIMITS
from openprogram_lsp.providers.images import check_images, fitted_ahead, omitted
from openprogram_lsp.providers.think_tags import ThinkTagSplitter

NAME = "openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
OFFICIAL_HOST = "api.openai.com"
KEY_ENV = "OPENAI_API_KEY"
BASE_ENV = "OPENAI_BASE_URL"

_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
CONTENT_FILTER = "the server's content filter stopped the response"


EXTRA_FIELD = "extra_content"
"""Where Gemini's OpenAI-compatible endpoint puts a tool call's thought signature
(``{"google": {"thought_signature": ...}}``), to be sent back on that call unchanged."""
REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where OpenAI-compatible servers put reasoning text: DeepSeek, llama.cpp and older vLLM
``reasoning_content``; newer vLLM, Ollama and OpenRouter ``reasoning``."""


def _image_url(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url",
            "image_url": {"url": f"data:{part.media_type};base64,{load_base64(part.sha256)}"}}


def _user_content(m: Message, sees: bool) -> str | list[dict[str, Any]]:
    """A user message's content: its text, then its images as ``image_url`` parts (data URLs);
    for a model that does not see, a note in place of each image."""
    if not m.images:
        return m.content
    if not sees:
        return omitted(m)
    text = [{"type": "text", "text": m.content}] if m.content else []
    return [*text, *map(_image_url, m.images)]


def encode_messages(system: str, messages: Sequence[Message],
                    reasoning_of: str | None = None, sees: bool = False,
                    model: str | None = None) -> list[dict[str, Any]]:
    """Provider-neutral messages as Chat Completions messages (tool results as ``tool``); the
    thoughts ``reasoning_of`` (a model) wrote go back in the field they came in, and the
    ``extra_content`` ``model`` put on its tool calls goes back on them. A tool message takes
    text only, so the images tool results returned follow them in one user message."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    shown: list[Message] = []  # tool results with images, until the run of results ends
    for m in messages:
        if shown and m.role != "tool":
            out.append(_tool_images(shown))
            shown = []
        if m.role == "tool":
            content = m.content or "(no output)"
            if m.is_error and not content.lower().startswith("error"):
                content = f"Error: {content}"
            if m.images and not sees:
                content = omitted(m.model_copy(update={"content": content}))
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": content})
            if m.images and sees:
                shown.append(m)
        elif m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                extras = {t.call: t.extra for t in m.thoughts if t.field == EXTRA_FIELD
                          and t.source == NAME and t.model == model and t.extra is not None}
                msg["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name,
                                  "arguments": json.dumps(c.arguments, ensure_ascii=False)},
                     **({"extra_content": extras[i]} if i in extras else {})}
                    for i, c in enumerate(m.tool_calls)]
            elif not m.content:
                msg["content"] = ""
            mine = [t for t in m.thoughts if reasoning_of is not None and t.source == NAME
                    and t.model == reasoning_of and t.text and t.field != EXTRA_FIELD]
            if mine:
                msg[mine[0].field or REASONING_FIELDS[0]] = "".join(t.text for t in mine)
            out.append(msg)
        else:
            out.append({"role": m.role, "content": _user_content(m, sees)})
    if shown:
        out.append(_tool_images(shown))
    return out


def _tool_images(results: list[Message]) -> dict[str, Any]:
    """The user message carrying the images of a run of tool results."""
    parts: list[dict[str, Any]] = []
    for m in results:
        names = ", ".join(i.name or i.sha256[:12] for i in m.images)
        parts.append({"type": "text", "text": f"[the image(s) {m.name or 'a tool'} returned "
                                              f"({m.tool_call_id}): {names}]"})
        parts += map(_image_url, m.images)
    return {"role": "user", "content": parts}


def encode_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs as Chat Completions ``function`` tools."""
    return [{"type": "function",
             "function": {"name": t.name, "description": t.description,
                          "parameters": t.input_schema}} for t in tools]


def parse_arguments(raw: str, name: str, provider: str = NAME) -> dict[str, Any]:
    """A tool call's assembled JSON arguments as a dict; a clear ProviderError otherwise."""
    raw = raw.strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ProviderError(f"the model sent invalid JSON arguments for tool {name!r}: {exc}",
                            provider=provider) from None
    if not isinstance(value, dict):
        raise ProviderError(f"the model sent arguments for tool {name!r} that are not an object",
                            provider=provider)
    return value


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    args: list[str] = field(default_factory=list)
    extra: dict[str, Any] | None = None  # ``extra_content`` (Gemini: the thought signature)


class ChatDecoder:
    """Decodes ``chat.completion.chunk`` events: text, tool calls by index, usage, finish."""

    def __init__(self, model: str | None = None, think_tags: bool = False) -> None:
        self.model = model  # named on the thoughts it decodes
        self.think_tags = think_tags  # split <think>…</think> out of the content
        self.reset()

    def reset(self) -> None:
        """Forget everything decoded so far."""
        self.usage = Usage()
        self.reasoning: list[str] = []
        self.reasoning_field: str | None = None
        self.splitter = ThinkTagSplitter() if self.think_tags else None
        self.calls: dict[int, _PartialCall] = {}
        self.finish_reason: str | None = None
        self.done = False
        self.choice_seen = False  # any chunk carried choice 0 (else the answer was empty)
        self.first_chunk = ""  # what came back first, named when no choice ever came
        self.chunks = 0
        self.refused = False  # a ``delta.refusal`` came: the model declined

    def feed(self, event: str, data: str) -> list[ProviderEvent]:
        """Decode one ``data:`` payload."""
        if self.done:
            return []
        if data == "[DONE]":
            self.done = True
            return []
        self.chunks += 1
        if self.chunks == 1:
            self.first_chunk = data[:200]
        try:
            obj = json.loads(data)
        except ValueError:
            raise ProviderError(f"malformed JSON in the stream: {data[:200]!r}",
                                provider=NAME) from None
        if not isinstance(obj, dict):
            raise ProviderError(f"malformed chunk in the stream: {data[:200]!r}", provider=NAME)
        if obj.get("error") is not None:
            raise _stream_error(obj["error"])
        out: list[ProviderEvent] = []
        for choice in obj.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self.choice_seen = True
            delta = choice.get("delta") or {}
            for name in REASONING_FIELDS:
                piece = delta.get(name)
                if isinstance(piece, str) and piece:
                    self.reasoning_field = self.reasoning_field or name
                    self.reasoning.append(piece)
                    out.append(ThoughtDelta(piece))
                    break
            content = delta.get("content")
            if content:
                out += self._content(str(content))
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:  # shown as the reply: it is what was said
                self.refused = True
                out.append(TextDelta(refusal))
            for tc in delta.get("tool_calls") or ():
                self._add_fragment(tc)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        usage = obj.get("usage")
        if isinstance(usage, dict):
            self.usage = _usage(usage)
        return out

    def _content(self, text: str, end: bool = False) -> list[ProviderEvent]:
        """Reply text, with a leading <think> block as thoughts when the model is one that may
        send it that way."""
        if self.splitter is None:
            return [TextDelta(text)] if text else []
        out: list[ProviderEvent] = []
        for thought, piece in (self.splitter.flush() if end else self.splitter.feed(text)):
            if thought:
                self.reasoning.append(piece)
                out.append(ThoughtDelta(piece))
            else:
                out.append(TextDelta(piece))
        return out

    def _add_fragment(self, tc: dict[str, Any]) -> None:
        idx = tc.get("index")
        call_id = tc.get("id") or ""
        if not isinstance(idx, int):
            # Some servers omit the index: match by id, else continue the last call.
            known = [i for i, c in self.calls.items() if call_id and c.id == call_id]
            if known:
                idx = known[0]
            elif call_id or not self.calls:
                idx = max(self.calls, default=-1) + 1
            else:
                idx = max(self.calls)
        part = self.calls.setdefault(idx, _PartialCall())
        if call_id and not part.id:
            part.id = str(call_id)
        fn = tc.get("function") or {}
        if fn.get("name") and not part.name:
            part.name = str(fn["name"])
        args = fn.get("arguments")
        if args:
            part.args.append(args if isinstance(args, str) else json.dumps(args))
        extra = tc.get("extra_content")
        if isinstance(extra, dict) and extra:
            part.extra = {**(part.extra or {}), **extra}

    def finish(self) -> list[ProviderEvent]:
        """Emit the assembled tool calls and the StreamEnd; error when the stream was cut."""
        if not self.done and self.finish_reason is None:
            raise ProviderError("the stream ended before the response was complete",
                                provider=NAME, retryable=True)
        if not self.choice_seen:
            sent = (f"{self.chunks} chunk(s) without a choice, the first {self.first_chunk!r}"
                    if self.chunks else "an empty stream ([DONE] and nothing before it)")
            raise ProviderError(f"the server's response held no choices (no text, no tool "
                                f"calls, no finish reason): it sent {sent}", provider=NAME)
        reason = self.finish_reason or ""
        stop: StopReason = _STOP.get(reason, "end_turn")
        if self.refused and stop == "end_turn":
            stop = "refusal"
        out: list[ProviderEvent] = self._content("", end=True)
        if self.reasoning:
            out.append(ThoughtReady(Thought(text="".join(self.reasoning), source=NAME,
                                            model=self.model, field=self.reasoning_field)))
        ready = 0  # the calls emitted so far: the index a signature goes back on
        for idx in sorted(self.calls):
            part = self.calls[idx]
            if not part.name:
                raise ProviderError(f"the model sent tool call #{idx} without a name",
                                    provider=NAME)
            raw = "".join(part.args)
            call_id = part.id or new_id("call_")
            if stop == "max_tokens":  # the limit may have cut the arguments mid-way
                try:
                    args = parse_arguments(raw, part.name)
                except ProviderError:
                    out.append(ToolCallCut(call_id, part.name, raw))
                    continue
            else:
                args = parse_arguments(raw, part.name)
            out.append(ToolCallReady(ToolCall(id=call_id, name=part.name, arguments=args)))
            if part.extra is not None:  # Gemini 3 answers 400 when it does not come back
                out.append(ThoughtReady(Thought(source=NAME, model=self.model, call=ready,
                                                field=EXTRA_FIELD, extra=part.extra)))
            ready += 1
        if self.calls and stop in ("end_turn", "stop_sequence"):
            stop = "tool_use"
        out.append(StreamEnd(stop, self.usage,
                             CONTENT_FILTER if reason == "content_filter" else None))
        return out


def _stream_error(err: Any) -> ProviderError:
    """An ``error`` object sent inside the stream."""
    if isinstance(err, dict):
        message = str(err.get("message") or err)
        code = err.get("code")
        retryable = code in ("server_error", "rate_limit_exceeded") or err.get("type") in (
            "server_error", "rate_limit_error")
        return ProviderError(f"error in the stream: {message}", provider=NAME,
                             retryable=bool(retryable))
    return ProviderError(f"error in the stream: {err}", provider=NAME)


def _usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(input_tokens=int(raw.get("prompt_tokens") or 0),
                 output_tokens=int(raw.get("completion_tokens") or 0),
                 cache_read_tokens=int(cached) if isinstance(cached, int) else None)


class OpenAIProvider(HttpProvider):
    """Streams Chat Completions from an OpenAI-compatible server."""

    name = NAME
    BASE_ENV, KEY_ENV, DEFAULT_BASE_URL = BASE_ENV, KEY_ENV, DEFAULT_BASE_URL
    OFFICIAL_HOST = OFFICIAL_HOST
    HINT = "a local OpenAI-compatible server"

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.official = urlsplit(self.base_url).hostname == OFFICIAL_HOST
        self.usage_option = True  # cleared when a server rejects ``stream_options``

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of one streaming Chat Completions request."""
        info = self.info
        sees, messages = check_images(request.messages, provider=NAME, model=self.model,
                                      sees=info.images, limits=OPENAI_LIMITS)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": encode_messages(
                request.system, messages,
                self.model if info.reasoning == "field" and info.send_reasoning else None,
                sees, self.model),
            "stream": True,
        }
        if not request.thinking and info.reasoning == "effort":
            # a summary's few output tokens also pay for the reasoning: ask for little
            body["reasoning_effort"] = "low"
        elif info.effort and info.reasoning in ("effort", "field"):
            body["reasoning_effort"] = info.effort
        if self.usage_option:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = encode_tools(request.tools)
        # The official API wants max_completion_tokens; compatible servers know max_tokens.
        body["max_completion_tokens" if self.official else "max_tokens"] = (
            request.max_output_tokens)
        return body

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream the response to a request as provider events (the downscaled copies of
        images it needs made first, off the event loop, when they are not made yet)."""
        ahead = fitted_ahead(request.messages, sees=self.info.images, limits=OPENAI_LIMITS,
                             then=lambda: self._stream(request))
        return ahead if ahead is not None else self._stream(request)

    def _stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        headers = {"accept": "text/event-stream"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        body = self.build_body(request)

        def without_usage_option(err: ProviderError) -> dict[str, Any] | None:
            # Some compatible servers refuse ``stream_options``: ask them again without it.
            if "stream_options" not in body or "stream_options" not in err.message:
                return None
            self.usage_option = False
            return {k: v for k, v in body.items() if k != "stream_options"}

        call = HttpCall(provider=NAME, url=f"{self.base_url}/chat/completions", body=body,
                        headers=headers, key_env=KEY_ENV, has_key=bool(self._api_key),
                        secrets=(self._api_key,), base_env=BASE_ENV,
                        on_rejected=without_usage_option)
        decoder = ChatDecoder(self.model, think_tags=self.info.reasoning == "field")
        return stream_events(call, decoder, self.settings, request.cancel)
