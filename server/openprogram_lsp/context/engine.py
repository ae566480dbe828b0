"""The context engine: prepare messages for a turn and account for the token budget."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from openprogram_lsp.context.render import render_chain
from openprogram_lsp.context.types import TurnPrep
from openprogram_lsp.core.types import Message, Node, ToolSpec, Usage

Summarizer = Callable[[list[Message]], Awaitable[str]]


def estimate_text(text: str) -> int:
    """A network-free token estimate."""
    return (len(text) + 3) // 4


class ContextEngine:
    """Turns the DAG chain into what the model sees on each turn."""

    def __init__(self, **_: Any) -> None:
        self.auto_compact_ratio = 0.8

    def prepare(self, *, session_id: str, history: list[Node], system: str,
                tools: list[ToolSpec], model: str, context_window: int,
                max_output_tokens: int = 4096, last_turn_at: str | None = None) -> TurnPrep:
        """Render the chain into messages and estimate their size."""
        messages = render_chain(history)
        prep = TurnPrep(session_id=session_id, model=model, system=system, messages=messages,
                        tools=tools, context_window=context_window,
                        max_output_tokens=max_output_tokens,
                        node_ids=[n.id for n in history])
        prep.estimate = (estimate_text(system) + sum(estimate_text(m.content) for m in messages)
                         + sum(estimate_text(str(t.input_schema)) for t in tools)
                         + max_output_tokens)
        return prep

    def should_auto_compact(self, prep: TurnPrep) -> bool:
        """Whether the prepared context is over the auto-compact threshold."""
        return prep.usage_ratio >= self.auto_compact_ratio

    async def auto_compact(self, prep: TurnPrep, *, history: list[Node],
                           summarize: Summarizer | None) -> TurnPrep:
        """Reduce the context (snip, then compact, then prepare again)."""
        return prep

    def after_turn(self, *, session_id: str, turn_id: str, prep: TurnPrep, usage: Usage) -> \
            dict[str, Any]:
        """Usage feedback after a turn; returns the ContextCommit record to freeze."""
        return {"turnId": turn_id, "model": prep.model, "contextWindow": prep.context_window,
                "estimate": prep.estimate, "usage": usage.wire(), "path": prep.path,
                "kept": prep.node_ids, "snipped": prep.snipped,
                "summarised": prep.summarised, "replaced": prep.replaced}
