"""Synchronous consultation before every tool call: the one place that can stop a tool.

The strictest verdict wins (deny > ask > allow) and reasons are merged. A gate that raises counts
as allow, except gates registered as critical, which fail closed. The gate applies whatever the
permission mode: ``bypass`` skips approvals, never gates.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from openprogram_lsp.events.bus import Event

log = logging.getLogger(__name__)

Verdict = Literal["allow", "ask", "deny"]
_RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True, slots=True)
class GateDecision:
    """A gate's verdict and why; a gate may also approve explicitly (``approved``: the call
    needs no prompt, though rules, control files and the sandbox still apply), rewrite the
    call (``updated_input``, the tool's own arguments) and add context for the model."""

    verdict: Verdict = "allow"
    reasons: tuple[str, ...] = field(default_factory=tuple)
    approved: bool = False
    updated_input: dict[str, Any] | None = None
    context: tuple[str, ...] = field(default_factory=tuple)


GateResult = GateDecision | Verdict | None
Gate = Callable[[Event], GateResult]


@dataclass(slots=True)
class _Registered:
    name: str
    gate: Gate
    critical: bool


class GateRegistry:
    """The tool gates of one runtime, consulted in registration order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gates: tuple[_Registered, ...] = ()

    def register(self, gate: Gate, *, name: str | None = None,
                 critical: bool = False) -> Callable[[], None]:
        """Register a gate (a duplicate name is refused); returns a function that unregisters it."""
        entry = _Registered(name or str(getattr(gate, "__qualname__", repr(gate))), gate, critical)
        with self._lock:
            if any(g.name == entry.name for g in self._gates):
                raise ValueError(f"a tool gate named {entry.name!r} is already registered")
            self._gates = (*self._gates, entry)

        def unregister() -> None:
            with self._lock:
                self._gates = tuple(g for g in self._gates if g is not entry)

        return unregister

    def decide(self, event: Event) -> GateDecision:
        """Consult every gate about a ``tool.before`` event and merge their verdicts."""
        verdict: Verdict = "allow"
        reasons: list[str] = []
        approved = False
        rewrites: list[dict[str, Any]] = []
        context: list[str] = []
        for entry in self._gates:  # tuple snapshot
            decision = _consult(entry, event)
            if decision is None:
                continue
            if _RANK[decision.verdict] > _RANK[verdict]:
                verdict = decision.verdict
            if decision.verdict != "allow":
                reasons.extend(decision.reasons)
            approved = approved or decision.approved
            if decision.updated_input is not None and decision.updated_input not in rewrites:
                rewrites.append(decision.updated_input)
            context.extend(decision.context)
        if len(rewrites) > 1:  # which one would the user have seen? neither runs
            return GateDecision("deny", (*reasons, "tool gates rewrote the call in different "
                                         "ways"), context=tuple(context))
        return GateDecision(verdict, tuple(reasons), approved=approved and verdict == "allow",
                            updated_input=rewrites[0] if rewrites else None,
                            context=tuple(context))

    def names(self) -> list[str]:
        """Names of the registered gates, in order."""
        return [g.name for g in self._gates]


def _consult(entry: _Registered, event: Event) -> GateDecision | None:
    try:
        result = entry.gate(event)
    except Exception as exc:
        if entry.critical:
            log.error("critical tool gate %s raised; denying", entry.name, exc_info=True)
            return GateDecision("deny", (f"gate {entry.name} failed: {exc}",))
        log.warning("tool gate %s raised; counting as allow", entry.name, exc_info=True)
        return None
    if result is None:
        return None
    decision = result if isinstance(result, GateDecision) else GateDecision(result)
    if decision.verdict not in _RANK:  # a malformed verdict fails closed
        return GateDecision("deny", (f"gate {entry.name} returned an unknown verdict "
                                     f"{decision.verdict!r}",))
    return decision
