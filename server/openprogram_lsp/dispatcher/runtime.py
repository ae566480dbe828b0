"""The state one server instance runs with: its bus, registries and settings, built by ``app``.

Nothing here is process-wide: two runtimes in one process share no subscriber, question or gate.
"""

from __future__ import annotations

from dataclasses import dataclass

from openprogram_lsp.config import Settings
from openprogram_lsp.events.bus import EventBus
from openprogram_lsp.events.questions import QuestionRegistry
from openprogram_lsp.events.tool_gate import GateRegistry


@dataclass(frozen=True, slots=True)
class Runtime:
    """The event bus, the pending questions, the tool gates and the validated settings."""

    bus: EventBus
    questions: QuestionRegistry
    gates: GateRegistry
    settings: Settings | None = None

    @classmethod
    def create(cls, settings: Settings | None = None, *, bus: EventBus | None = None) -> Runtime:
        """A fresh runtime (on ``bus`` when given): its own questions and gates."""
        bus = bus if bus is not None else EventBus()
        return cls(bus=bus, questions=QuestionRegistry(bus), gates=GateRegistry(),
                   settings=settings)
