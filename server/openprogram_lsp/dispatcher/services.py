"""The dependencies a dispatcher runs turns with, built and injected by ``app``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.approvals.rulebook import RuleBook
from openprogram_lsp.config import Settings
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.core.ports import (
    Approver,
    Asker,
    Buffers,
    Checkpointer,
    Collab,
    EditorHost,
    LanguageServers,
)
from openprogram_lsp.core.types import ClientOptions, PermissionMode
from openprogram_lsp.dispatcher.runtime import Runtime
from openprogram_lsp.events.bus import EventBus
from openprogram_lsp.events.questions import QuestionRegistry
from openprogram_lsp.events.tool_gate import GateRegistry
from openprogram_lsp.hooks.engine import HookEngine
from openprogram_lsp.providers.base import Provider
from openprogram_lsp.providers.factory import make_provider
from openprogram_lsp.store.session_store import SessionStore
from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.mcp import McpHub
from openprogram_lsp.tools.registry import ToolRegistry


@dataclass(slots=True)
class Services:
    """Stores, bus, tools, models and the injected approver/asker/checkpointer."""

    store: SessionStore
    workspace: Path
    runtime: Runtime = field(default_factory=Runtime.create)  # bus, questions, gates
    tools: ToolRegistry = field(default_factory=lambda: ToolRegistry(builtin_tools()))
    context: ContextEngine = field(default_factory=ContextEngine)
    default_model: str | None = None
    permission_mode: PermissionMode = "ask"
    approver: Approver | None = None
    collab: Collab | None = None  # what the collab tools reach (set by app)
    asker: Asker | None = None
    editor: EditorHost | None = None
    buffers: Buffers | None = None  # open editor documents (LSP document sync)
    language: LanguageServers | None = None  # the editor's language servers (diagnostics)
    question_timeout: float | None = 600.0
    max_iterations: int = 50
    max_output_tokens: int = 4096
    # (model spec, the turn's settings) -> provider
    provider_factory: Callable[[str, Settings | None], Provider] = field(
        default=lambda spec, settings=None: make_provider(spec, settings=settings))
    checkpointer_for: Callable[[Path], Checkpointer | None] | None = None
    rules_for: Callable[[Path], RuleBook] = field(default=lambda _ws: RuleBook())
    hooks: HookEngine | None = None  # user hooks, policies and agent definitions
    mcp: McpHub | None = None  # MCP servers as tool sources (None: built-ins only)
    disabled_tools: list[str] = field(default_factory=list)  # static admission (fnmatch)
    allowed_tools: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # the settings of one workspace (its .openprogram/config.toml); None: ``settings``
    settings_for: Callable[[Path], Settings] | None = None
    # the options of the editor driving a session (per connection over TCP)
    client_options: Callable[[str], ClientOptions | None] = field(default=lambda _sid: None)

    def workspace_settings(self, workspace: Path) -> Settings | None:
        """The validated settings turns in ``workspace`` run with."""
        return self.settings_for(workspace) if self.settings_for is not None else self.settings

    def options_of(self, session_id: str) -> ClientOptions:
        """The driving editor's options for a session's turns (defaults without one)."""
        return self.client_options(session_id) or ClientOptions()

    @property
    def bus(self) -> EventBus:
        """The runtime's event bus."""
        return self.runtime.bus

    @property
    def questions(self) -> QuestionRegistry:
        """The runtime's pending questions."""
        return self.runtime.questions

    @property
    def settings(self) -> Settings | None:
        """The validated settings the app was built from (the runtime's)."""
        return self.runtime.settings

    @property
    def gates(self) -> GateRegistry:
        """The runtime's tool gates."""
        return self.runtime.gates
