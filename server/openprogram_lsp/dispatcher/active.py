"""A turn in flight, as the dispatcher and its helpers see it."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.context.types import TurnPrep
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.hooks.engine import Definitions, TurnHooks
from openprogram_lsp.store.session_handle import SessionHandle


@dataclass(slots=True)
class ActiveTurn:
    """A turn in flight: ids, its session (the turn's only way into the store), control
    and what it touched."""

    session: SessionHandle
    session_id: str
    user_node_id: str
    turn_id: str
    request: TurnRequest
    control: TurnControl
    workspace: Path
    touched: set[str] = field(default_factory=set)
    full_scan: bool = False
    baseline_done: bool = False
    buffers_recorded: set[str] = field(default_factory=set)  # unsaved buffers it edited
    prep: TurnPrep | None = None
    model: str = ""
    resources: AsyncExitStack = field(default_factory=AsyncExitStack)
    warnings: list[str] = field(default_factory=list)  # shown with the result
    hooks: TurnHooks | None = None
    trusted_once: frozenset[str] = frozenset()  # workspace definitions allowed for this turn
    definitions: Definitions | None = None  # its hooks and agent definitions, read once
