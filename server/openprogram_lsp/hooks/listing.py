"""The hooks of a workspace as listed (``openprogram/hooks``, ``openprogram-lsp hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from openprogram_lsp.hooks.config import Scope
from openprogram_lsp.hooks.trust import TrustState


@dataclass(frozen=True, slots=True)
class HookRunSummary:
    """A hook's last run and what it decided."""

    exit_code: int | None
    duration_ms: float
    timed_out: bool
    at: float  # seconds since the epoch
    outcome: str
    error: str | None = None
    stderr: str | None = None  # the last 500 characters


@dataclass(frozen=True, slots=True)
class HookListing:
    """One hook definition with its trust and its last run."""

    id: str
    event: str
    matcher: str
    command: str
    timeout: float
    critical: bool
    source: str
    scope: Scope
    trust: TrustState
    active: bool  # trusted, so it runs
    last_result: HookRunSummary | None = None
    type: str = "command"  # command, http (command: its URL), prompt, agent (command: prompt)
    background: bool = False  # ``async``
