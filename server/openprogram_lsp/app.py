"""The composition root: builds stores, services and the dispatcher, and wires them together."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.approvals.rulebook import RuleBook
from openprogram_lsp.collab.subagents import Subagents
from openprogram_lsp.collab.tools import collab_tools
from openprogram_lsp.config import Settings
from openprogram_lsp.config.sections.checkpoints import CheckpointSection
from openprogram_lsp.config.sections.context import ContextSection
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.config.sections.hooks import PoliciesSection
from openprogram_lsp.config.sections.mcp import McpSection, ToolsSection
from openprogram_lsp.config.workspaces import WorkspaceSettings
from openprogram_lsp.context.budget import Calibration
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.context.types import ContextConfig
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.core.fsutil import protect_dir
from openprogram_lsp.core.ports import Approver, Asker, Checkpointer
from openprogram_lsp.core.turn_root import real_path
from openprogram_lsp.core.types import PERMISSION_MODES, PermissionMode
from openprogram_lsp.dispatcher import Dispatcher, Services
from openprogram_lsp.dispatcher.runtime import Runtime
from openprogram_lsp.dispatcher.turn_settings import withhold_keys
from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.hooks.config import Policies
from openprogram_lsp.hooks.engine import HookEngine
from openprogram_lsp.hooks.gate import install_gates
from openprogram_lsp.providers.base import Provider
from openprogram_lsp.providers.factory import make_provider
from openprogram_lsp.store.checkpoints.config import CheckpointConfig
from openprogram_lsp.store.session_store import SessionStore
from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.mcp import McpHub
from openprogram_lsp.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


@dataclass(slots=True)
class AppConfig:
    """What the composition root builds from: the workspace and the validated settings.

    Built explicitly: ``from_settings`` (what the CLI and the server do) or by hand with the
    defaults; nothing here reads the environment."""

    workspace: Path
    home: Path
    model: str | None = None
    permission_mode: PermissionMode = "ask"
    question_timeout: float | None = 600.0
    approval_timeout: float | None = 600.0
    max_iterations: int = 50
    extra: dict[str, Any] = field(default_factory=dict)
    settings: Settings = field(default_factory=Settings.defaults)
    # how to read another workspace's settings (an editor's folder); None: ``settings`` only
    settings_for: Callable[[Path], Settings] | None = None

    def __post_init__(self) -> None:
        if self.max_iterations == 50:  # the default: the settings may say otherwise
            self.max_iterations = self.settings.get(CoreSettings).max_iterations

    @classmethod
    def from_settings(cls, settings: Settings, workspace: Path) -> AppConfig:
        """Every field from the settings (config files, environment, flags)."""
        core = settings.get(CoreSettings)
        return cls(workspace=workspace, home=settings.home, model=core.model,
                   permission_mode=core.permission_mode,
                   question_timeout=core.question_timeout,
                   approval_timeout=core.approval_timeout, max_iterations=core.max_iterations,
                   settings=settings)


def check_mode(mode: str | None, default: PermissionMode = "ask") -> PermissionMode:
    """Validate a permission mode name."""
    if mode is None:
        return default
    if mode not in PERMISSION_MODES:
        raise ConfigError(f"unknown permission mode {mode!r}; use one of "
                          f"{', '.join(PERMISSION_MODES)}")
    return mode  # type: ignore[return-value]


def checkpointer_factory(home: Path, config: CheckpointConfig | None = None, *,
                         config_for: Callable[[Path], CheckpointConfig] | None = None) -> Any:
    """A function giving each workspace its checkpoint store (None when unavailable).

    ``config_for`` gives a workspace its own limits (its config file), else ``config``; a bad
    value there is its ConfigError (the same line the workspace's turns fail with), never the
    defaults in its place."""
    try:
        from openprogram_lsp.store.checkpoints import CheckpointStore
    except ImportError:
        return None

    def make(workspace: Path) -> Checkpointer | None:
        limits = config_for(workspace) if config_for is not None else config
        try:
            return CheckpointStore(workspace, home=home, config=limits)
        except Exception:
            log.exception("checkpoints disabled for %s", workspace)
            return None

    return make


def _policies(settings: Settings) -> Policies:
    section = settings.get(PoliciesSection)
    return Policies(destructive_commands=section.destructive_commands,
                    untested_edits=section.untested_edits)


def build_dispatcher(config: AppConfig, *, approver: Approver | None = None,
                     asker: Asker | None = None, bus: EventBus | None = None,
                     runtime: Runtime | None = None) -> Dispatcher:
    """Build the runtime (a fresh bus, questions and gates), the services and the dispatcher."""
    settings = config.settings
    if runtime is None:
        runtime = Runtime.create(settings, bus=bus)
    elif runtime.settings is not settings:  # one holder of the settings the app was built from
        runtime = dataclasses.replace(runtime, settings=settings)
    install_gates(runtime.gates)
    withhold_keys(settings)  # before any command: the configured key variables are withheld
    protect_dir(config.home)  # the whole state root: trust files, rules, run files, stores
    store = SessionStore(config.home, capacity=settings.get(CoreSettings).session_cache_cap)
    rulebooks: dict[str, RuleBook] = {}  # by real path

    def rules_for(workspace: Path) -> RuleBook:
        real = real_path(workspace)
        if real not in rulebooks:
            rulebooks[real] = RuleBook.for_workspace(config.home, Path(real))
        return rulebooks[real]

    per_workspace = (WorkspaceSettings(config.settings_for, config.settings.user_path)
                     if config.settings_for else None)

    def checkpoint_limits(workspace: Path) -> CheckpointConfig:
        assert per_workspace is not None
        return CheckpointConfig.from_config(per_workspace(workspace).get(CheckpointSection))

    def provider(spec: str, turn: Settings | None = None) -> Provider:
        return make_provider(spec, settings=turn or settings)

    mcp, tools = settings.get(McpSection), settings.get(ToolsSection)
    services = Services(
        store=store, workspace=config.workspace, runtime=runtime,
        tools=ToolRegistry([*builtin_tools(), *collab_tools()]),
        default_model=config.model, permission_mode=config.permission_mode,
        approver=approver, asker=asker, question_timeout=config.question_timeout,
        max_iterations=config.max_iterations,
        checkpointer_for=checkpointer_factory(
            config.home, CheckpointConfig.from_config(settings.get(CheckpointSection)),
            config_for=checkpoint_limits if per_workspace is not None else None),
        rules_for=rules_for, extra=dict(config.extra),
        mcp=McpHub(config.home, startup_timeout=mcp.startup_timeout,
                   call_timeout=mcp.tool_timeout),
        disabled_tools=list(tools.disabled), allowed_tools=tools.allowed,
        hooks=HookEngine(config.home, policies=_policies(settings)),
        provider_factory=provider, settings_for=per_workspace,
        context=ContextEngine(config=ContextConfig.from_config(settings.get(ContextSection)),
                              calibration=Calibration(config.home / "context-calibration.json")),
    )

    def tools_added(workspace: Path, server: str, tools: list[dict[str, Any]]) -> None:
        # no session: every editor is told (the MCP loop may carry a turn's context)
        runtime.bus.emit(Event("mcp.tools_added", {
            "workspace": str(workspace), "server": server, "tools": tools}))

    assert services.mcp is not None
    services.mcp.on_tools_added = tools_added

    def collaboration(dispatcher: Dispatcher) -> Subagents:
        agents = Subagents(dispatcher)
        services.collab = agents  # the collab tools' port
        return agents

    return Dispatcher(services, collaboration=collaboration)
