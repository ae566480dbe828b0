"""Streams shaped as the real services send them: Chat Completions chunks and Messages events."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

CREATED = 1764460800


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE event as bytes (compact JSON, as both services send)."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def rechunk(chunks: list[bytes], size: int) -> list[bytes]:
    """The same bytes cut every ``size`` bytes, ignoring event boundaries (and UTF-8)."""
    blob = b"".join(chunks)
    return [blob[i:i + size] for i in range(0, len(blob), size)]


@dataclass
class Call:
    """A tool call to stream: its arguments are sent in the given fragments."""

    id: str
    name: str
    fragments: list[str]

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments the fragments add up to."""
        parsed: dict[str, Any] = json.loads("".join(self.fragments) or "{}")
        return parsed


def fragments(arguments: dict[str, Any], size: int) -> list[str]:
    """The JSON of ``arguments`` cut into pieces of ``size`` characters."""
    text = json.dumps(arguments)
    return [text[i:i + size] for i in range(0, len(text), size)]


@dataclass
class OpenAIStream:
    """A Chat Completions stream with ``stream_options.include_usage``."""

    model: str = "gpt-test"
    text: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    finish: str | None = None
    usage: dict[str, Any] | None = field(default_factory=lambda: {
        "prompt_tokens": 120, "completion_tokens": 15, "total_tokens": 135,
        "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0,
                                      "rejected_prediction_tokens": 0}})
    interleave: bool = False  # send the calls' fragments round-robin instead of in turn

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse({"id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "object":
                    "chat.completion.chunk", "created": CREATED, "model": self.model,
                    "service_tier": "default", "system_fingerprint": "fp_44709d6fcb",
                    "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                 "finish_reason": finish}],
                    "usage": None})

    def events(self, done: bool = True) -> list[bytes]:
        """The SSE events, one per HTTP chunk."""
        out = [self._chunk({"role": "assistant", "content": "", "refusal": None})]
        out += [self._chunk({"content": piece}) for piece in self.text]
        out += self._call_chunks()
        finish = self.finish or ("tool_calls" if self.calls else "stop")
        out.append(self._chunk({}, finish))
        if self.usage is not None:
            out.append(sse({"id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
                            "object": "chat.completion.chunk", "created": CREATED,
                            "model": self.model, "system_fingerprint": "fp_44709d6fcb",
                            "choices": [], "usage": self.usage}))
        if done:
            out.append(b"data: [DONE]\n\n")
        return out

    def _call_chunks(self) -> list[bytes]:
        firsts = [self._chunk({"tool_calls": [{
            "index": i, "id": c.id, "type": "function",
            "function": {"name": c.name, "arguments": ""}}]}) for i, c in enumerate(self.calls)]
        rests = [[self._chunk({"tool_calls": [{"index": i, "function": {"arguments": f}}]})
                  for f in c.fragments] for i, c in enumerate(self.calls)]
        if not self.interleave:
            return [x for i in range(len(self.calls)) for x in [firsts[i], *rests[i]]]
        out = list(firsts)
        for step in range(max((len(r) for r in rests), default=0)):
            out += [r[step] for r in rests if step < len(r)]
        return out


@dataclass
class AnthropicStream:
    """A Messages API stream, as ``stream: true`` sends it."""

    model: str = "claude-test"
    text: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    stop: str | None = None
    input_tokens: int = 472
    output_tokens: int = 89
    cache_read: int = 1800
    cache_write: int = 0
    thinking: list[tuple[str, str]] = field(default_factory=list)  # (text, signature) blocks

    def events(self) -> list[bytes]:
        """The SSE events, one per HTTP chunk."""
        out = [sse({"type": "message_start", "message": {
            "id": "msg_014p7gG3wDgGV9EUtLvnow3U", "type": "message", "role": "assistant",
            "model": self.model, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens,
                      "cache_creation_input_tokens": self.cache_write,
                      "cache_read_input_tokens": self.cache_read, "output_tokens": 1,
                      "service_tier": "standard"}}}, "message_start")]
        index = 0
        for thought, signature in self.thinking:
            out.append(sse({"type": "content_block_start", "index": index, "content_block": {
                "type": "thinking", "thinking": "", "signature": ""}}, "content_block_start"))
            for delta in ({"type": "thinking_delta", "thinking": thought},
                          {"type": "signature_delta", "signature": signature}):
                out.append(sse({"type": "content_block_delta", "index": index, "delta": delta},
                               "content_block_delta"))
            out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
            index += 1
        if self.text:
            out.append(sse({"type": "content_block_start", "index": index,
                            "content_block": {"type": "text", "text": ""}},
                           "content_block_start"))
            out.append(sse({"type": "ping"}, "ping"))
            out += [sse({"type": "content_block_delta", "index": index,
                         "delta": {"type": "text_delta", "text": t}}, "content_block_delta")
                    for t in self.text]
            out.append(sse({"type": "content_block_stop", "index": index},
                           "content_block_stop"))
            index += 1
        for c in self.calls:
            out.append(sse({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": c.id, "name": c.name, "input": {}}},
                "content_block_start"))
            for f in ["", *c.fragments]:
                out.append(sse({"type": "content_block_delta", "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": f}},
                               "content_block_delta"))
            out.append(sse({"type": "content_block_stop", "index": index},
                           "content_block_stop"))
            index += 1
        stop = self.stop or ("tool_use" if self.calls else "end_turn")
        out.append(sse({"type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": self.output_tokens}}, "message_delta"))
        out.append(sse({"type": "message_stop"}, "message_stop"))
        return out


def openai_error(message: str, type_: str, code: str | None = None) -> bytes:
    """An OpenAI error body."""
    return json.dumps({"error": {"message": message, "type": type_, "param": None,
                                 "code": code}}).encode()


def anthropic_error(message: str, type_: str) -> bytes:
    """An Anthropic error body."""
    return json.dumps({"type": "error", "error": {"type": type_, "message": message}}).encode()
