"""The provider interface: a model streams text deltas, tool calls, usage and a stop reason."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from openprogram_lsp.core.types import Message, StopReason, Thought, ToolCall, ToolSpec, Usage


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ThoughtDelta:
    """A piece of the model's reasoning, streamed as it comes (never reply text)."""

    text: str


@dataclass(frozen=True, slots=True)
class ThoughtReady:
    """One whole reasoning block (with what its API needs to get it back unchanged)."""

    thought: Thought


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A complete, validated tool call."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolCallCut:
    """A tool call the output limit cut while its arguments were being written: never run,
    reported to the model and the user (``partial`` is the JSON text that came)."""

    id: str
    name: str
    partial: str


WINDOW_FULL = "the conversation filled the model's context window"
"""``StreamEnd.detail`` of a ``max_tokens`` stop the window made, not the output limit
(Anthropic ``model_context_window_exceeded``)."""


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The end of one model response; ``detail`` says more about a refusal (the provider's
    explanation) or a cut (``WINDOW_FULL``) when there is something to say."""

    stop_reason: StopReason = "end_turn"
    usage: Usage = field(default_factory=Usage)
    detail: str | None = None


ProviderEvent = TextDelta | ThoughtDelta | ThoughtReady | ToolCallReady | ToolCallCut | StreamEnd


@dataclass(slots=True)
class ModelRequest:
    """One call to a model: the system prompt, the messages and the tools offered."""

    system: str
    messages: Sequence[Message]  # a Transcript in a turn: the carried history, not a copy
    tools: list[ToolSpec]
    max_output_tokens: int = 4096
    cancel: asyncio.Event | None = None
    # False: no extended thinking asked for (the summariser: a thinking budget would eat the
    # few output tokens a summary has, or exceed them, which the API refuses)
    thinking: bool = True


@runtime_checkable
class Provider(Protocol):
    """A model that streams a response to a request."""

    name: str
    model: str
    context_window: int

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream the response; the last event is a ``StreamEnd``. Raises ProviderError."""
        ...
