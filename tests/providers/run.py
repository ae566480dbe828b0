"""Helpers to drive a provider and look at what it produced."""

from __future__ import annotations

from openprogram_lsp.core.types import Message, ToolCall, ToolSpec
from openprogram_lsp.providers.base import (
    ModelRequest,
    Provider,
    ProviderEvent,
    StreamEnd,
    TextDelta,
    ToolCallReady,
)

READ_TOOL = ToolSpec(name="read_file", description="Read a file in the workspace.",
                     input_schema={"type": "object",
                                   "properties": {"path": {"type": "string"}},
                                   "required": ["path"]}, kind="read")
WRITE_TOOL = ToolSpec(name="write_file", description="Write a file.",
                      input_schema={"type": "object",
                                    "properties": {"path": {"type": "string"},
                                                   "content": {"type": "string"}},
                                    "required": ["path", "content"]}, kind="edit")


def request(text: str = "hello", **kw: object) -> ModelRequest:
    """A one-message request offering two tools."""
    return ModelRequest(system="You are a test.", messages=[Message(role="user", content=text)],
                        tools=[READ_TOOL, WRITE_TOOL], **kw)  # type: ignore[arg-type]


async def collect(provider: Provider, req: ModelRequest,
                  into: list[ProviderEvent] | None = None) -> list[ProviderEvent]:
    """Every event of one stream (``into`` keeps them even when the stream raises)."""
    out = into if into is not None else []
    async for ev in provider.stream(req):
        out.append(ev)
    return out


def text_of(events: list[ProviderEvent]) -> str:
    """The streamed text."""
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def calls_of(events: list[ProviderEvent]) -> list[ToolCall]:
    """The tool calls."""
    return [e.call for e in events if isinstance(e, ToolCallReady)]


def end_of(events: list[ProviderEvent]) -> StreamEnd:
    """The final StreamEnd (asserting it is last)."""
    assert events and isinstance(events[-1], StreamEnd), events
    assert sum(isinstance(e, StreamEnd) for e in events) == 1
    return events[-1]
