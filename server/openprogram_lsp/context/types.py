"""What the context engine hands the loop runner for one turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openprogram_lsp.core.types import Message, ToolSpec


@dataclass(slots=True)
class TurnPrep:
    """Messages for the model plus the budget arithmetic behind them."""

    session_id: str
    model: str
    system: str
    messages: list[Message]
    tools: list[ToolSpec]
    context_window: int
    max_output_tokens: int
    estimate: int = 0
    node_ids: list[str] = field(default_factory=list)
    snipped: list[str] = field(default_factory=list)
    summarised: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    path: str = "none"
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def usage_ratio(self) -> float:
        """Estimated share of the context window this prep uses."""
        return self.estimate / max(1, self.context_window)
