"""The composition root: builds stores, services and the dispatcher, and wires them together."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.context.budget import Calibration
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.core.fsutil import state_root
from openprogram_lsp.core.ports import Approver, Asker, Checkpointer
from openprogram_lsp.core.types import PERMISSION_MODES, PermissionMode
from openprogram_lsp.dispatcher import Dispatcher, Services
from openprogram_lsp.events.bus import EventBus, get_event_bus
from openprogram_lsp.hooks.engine import HookEngine
from openprogram_lsp.hooks.gate import install_gates
from openprogram_lsp.store.session_store import SessionStore
from openprogram_lsp.tools.policy import RuleBook

log = logging.getLogger(__name__)


@dataclass(slots=True)
class AppConfig:
    """Settings from the command line, the environment and the editor."""

    workspace: Path = field(default_factory=Path.cwd)
    home: Path = field(default_factory=state_root)
    model: str | None = None
    permission_mode: PermissionMode = "ask"
    question_timeout: float | None = 600.0
    approval_timeout: float | None = 600.0
    max_iterations: int = field(default_factory=lambda: max_iterations_from_env())
    extra: dict[str, Any] = field(default_factory=dict)


def max_iterations_from_env(default: int = 50) -> int:
    """The cap on model calls per turn: ``OPENPROGRAM_MAX_ITERATIONS`` when valid, else 50."""
    raw = os.environ.get("OPENPROGRAM_MAX_ITERATIONS", "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"OPENPROGRAM_MAX_ITERATIONS must be a positive integer, got {raw!r}")
    return int(raw)


def resolve_model(*, request: str | None = None, flag: str | None = None,
                  init_options: str | None = None) -> str | None:
    """Model precedence: request field, --model, OPENPROGRAM_MODEL, initialization options."""
    for candidate in (request, flag, os.environ.get("OPENPROGRAM_MODEL"), init_options):
        if candidate and candidate.strip():
            return candidate.strip()
    return None


def check_mode(mode: str | None, default: PermissionMode = "ask") -> PermissionMode:
    """Validate a permission mode name."""
    if mode is None:
        return default
    if mode not in PERMISSION_MODES:
        raise ConfigError(f"unknown permission mode {mode!r}; use one of "
                          f"{', '.join(PERMISSION_MODES)}")
    return mode  # type: ignore[return-value]


def checkpointer_factory(home: Path) -> Any:
    """A function giving each workspace its checkpoint store (None when unavailable)."""
    try:
        from openprogram_lsp.store.checkpoints import CheckpointStore
    except ImportError:
        return None

    def make(workspace: Path) -> Checkpointer | None:
        try:
            return CheckpointStore(workspace, home=home)
        except Exception:
            log.exception("checkpoints disabled for %s", workspace)
            return None

    return make


def build_dispatcher(config: AppConfig, *, approver: Approver | None = None,
                     asker: Asker | None = None, bus: EventBus | None = None) -> Dispatcher:
    """Build the services and the dispatcher for a configuration."""
    store = SessionStore(config.home)
    rulebooks: dict[Path, RuleBook] = {}

    def rules_for(workspace: Path) -> RuleBook:
        key = workspace.resolve()
        if key not in rulebooks:
            rulebooks[key] = RuleBook.for_workspace(config.home, key)
        return rulebooks[key]

    install_gates()
    services = Services(
        store=store, workspace=config.workspace, bus=bus or get_event_bus(),
        default_model=config.model, permission_mode=config.permission_mode,
        approver=approver, asker=asker, question_timeout=config.question_timeout,
        max_iterations=config.max_iterations, checkpointer_for=checkpointer_factory(config.home),
        rules_for=rules_for, extra=dict(config.extra), hooks=HookEngine(config.home),
        context=ContextEngine(calibration=Calibration(config.home / "context-calibration.json")),
    )
    return Dispatcher(services)
