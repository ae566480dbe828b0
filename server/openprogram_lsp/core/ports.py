"""Interfaces a lower layer needs and a higher layer implements (injected by ``app``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from openprogram_lsp.core.diagnostics import Diagnostic
from openprogram_lsp.core.navigation import Navigation, NavigationKind
from openprogram_lsp.core.types import (
    Checkpoint,
    PermissionOutcome,
    PermissionRequest,
    Question,
)


@runtime_checkable
class Approver(Protocol):
    """Asks the user whether a tool call may run."""

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        """Return the user's choice, or ``outcome="cancelled"``."""
        ...


@runtime_checkable
class Asker(Protocol):
    """Puts an agent question to the user."""

    async def ask(self, question: Question) -> str | None:
        """Return the answer, or None when the user dismissed the question."""
        ...


@runtime_checkable
class Checkpointer(Protocol):
    """Records the project's files after each turn that changed them."""

    def ensure_baseline(self, session_id: str) -> Checkpoint | None:
        """Take the baseline checkpoint before the first edit of a session, if none exists."""
        ...

    def baseline_ready(self, session_id: str) -> bool:
        """True when ``ensure_baseline`` has nothing to do (known without a lock or a read);
        False when it may have."""
        ...

    def defer_baseline(self, session_id: str) -> bool:
        """Take the session's baseline after the first walk instead of waiting for it now;
        True when deferred: announce each write first (``record_before``)."""
        ...

    def record_before(self, session_id: str, paths: Iterable[str]) -> bool:
        """Record paths as they are, before the turn writes them, while the session's baseline
        is deferred; False when they cannot be: take the baseline now (``ensure_baseline``)."""
        ...

    def note_paths(self, paths: Iterable[str]) -> None:
        """Tell the checkpointer which workspace paths may have changed."""
        ...

    def record_buffer(self, session_id: str, rel: str,
                      current: Callable[[], str | None]) -> Checkpoint | None:
        """Record a workspace path as its editor buffer's unsaved text (``current``: that text
        while it differs from the disk, else None) from now on, checkpointing the text it has
        now when the store holds something else."""
        ...

    def commit_turn(self, session_id: str, turn_id: str, message: str,
                    *, full_scan: bool = False) -> Checkpoint | None:
        """Commit the workspace's changes for a turn; None when nothing changed."""
        ...

    def defer_turn(self, session_id: str, turn_id: str, message: str, paths: Iterable[str],
                   done: Callable[[Checkpoint | None], None] | None = None) -> str | None:
        """While the workspace's first walk runs, capture the turn's changes now and commit its
        checkpoint after the walk (``done`` then gets it); returns the id it will have, or None
        when nothing was deferred (commit it now with ``commit_turn``)."""
        ...

    def turn_guard(self, timeout: float | None = None) -> AbstractAsyncContextManager[None]:
        """Hold the workspace from a turn's first edit to its checkpoint (serialises sessions)."""
        ...

    def prune_if_due(self, keep_ids: Iterable[str] | Callable[[], Iterable[str]] = ()
                     ) -> list[str]:
        """Apply the retention limits when they are exceeded; returns dropped ids."""
        ...

    def retention_may_be_due(self) -> bool:
        """False only when no limit can be exceeded yet (checked without a lock or a read):
        then no background prune needs asking for."""
        ...


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a command run by the editor ended: exit code (None if killed) and its output."""

    exit_code: int | None
    output: str
    timed_out: bool = False
    signal: str | None = None


@runtime_checkable
class EditorHost(Protocol):
    """Files and terminals of the editor that runs a session (ACP clients that offer them).

    Each method answers None/False when that editor does not offer it; the tool then does the
    work itself. Paths are absolute and already confined to the workspace by the tool.
    """

    async def read_text(self, session_id: str, path: Path) -> str | None:
        """The file as the editor has it (unsaved changes included)."""
        ...

    async def write_text(self, session_id: str, path: Path, content: str) -> bool:
        """Write the file through the editor."""
        ...

    async def run_command(self, session_id: str, argv: list[str], cwd: Path,
                          timeout: float) -> CommandResult | None:
        """Run a command in an editor terminal and wait for it."""
        ...


@runtime_checkable
class Buffers(Protocol):
    """The editor's open documents (LSP document sync): unsaved text, and edits applied to it.

    Paths are absolute and already confined to the workspace by the tool.
    """

    def unsaved(self, session_id: str, path: Path) -> str | None:
        """The buffer's text when the file is open with changes not on disk, else None."""
        ...

    def unsaved_under(self, session_id: str, root: Path) -> dict[Path, str]:
        """Every open buffer with changes not on disk whose file is ``root`` or below it
        (resolved paths; the session's own editor wins a file open in several)."""
        ...

    async def apply(self, session_id: str, path: Path, old_text: str, new_text: str) -> str:
        """Replace the buffer's ``old_text`` (its whole current text) by ``new_text`` in the
        editor, unsaved; returns "" when applied, else why not."""
        ...


@runtime_checkable
class LanguageServers(Protocol):
    """What the editor's own language servers know of workspace files (editors that offer it).

    Paths are absolute and already confined to the workspace by the caller.
    """

    def offers_diagnostics(self, session_id: str) -> bool:
        """Whether the session's editor can report its language servers' diagnostics."""
        ...

    async def diagnostics(self, session_id: str, paths: list[Path], *,
                          settle: bool, within: float | None = None,
                          ) -> dict[Path, list[Diagnostic]] | None:
        """Each file's diagnostics (``settle``: once the servers went quiet after a change),
        within ``within`` seconds (default: the implementation's bound); None when no editor
        answered."""
        ...

    def offers_navigation(self, session_id: str) -> bool:
        """Whether the session's editor answers definitions, references, hovers, symbols."""
        ...

    async def navigate(self, session_id: str, kind: NavigationKind, *, path: Path | None = None,
                       line: int = 0, character: int = 0,
                       query: str = "") -> Navigation | None:
        """The editor's language servers' answer; None when no editor answered."""
        ...


@dataclass(frozen=True, slots=True)
class CallSite:
    """Where a tool call runs: its session, turn and workspace."""

    session_id: str
    turn_id: str
    workspace: Path


@dataclass(frozen=True, slots=True)
class AgentRun:
    """One subagent run or send_message delivery (a job of this process or a stored child)."""

    id: str
    session_id: str
    head_id: str | None  # the child's branch tip now
    status: Literal["running", "done", "error", "cancelled", "truncated", "refused"]
    kind: Literal["agent", "message", "reply"]
    created_at: str
    label: str | None = None
    queued: bool | None = None  # True: waiting behind other work on its branch
    error: str | None = None
    parent_session_id: str | None = None  # the session that started it
    parent_turn_id: str | None = None  # the turn that started it


@dataclass(frozen=True, slots=True)
class AgentDefinitionRow:
    """An agent definition usable as the agent tool's ``agent``, with its trust (``hooks/``
    lists them; a port type because the collaboration tools see them)."""

    id: str
    name: str
    description: str
    source: str
    scope: Literal["user", "workspace"]
    tools: tuple[str, ...] | None  # None: every tool
    disallowed_tools: tuple[str, ...]
    trust: Literal["trusted", "rejected", "unknown"]
    model: str | None = None
    permission_mode: str | None = None


@runtime_checkable
class Collab(Protocol):
    """Subagents and send_message as the collaboration tools see them (``collab/`` implements
    it; refusals raise ``ToolError`` with text for the model)."""

    def spawn_from_tool(self, site: CallSite, prompt: str, label: str | None,
                        branch_from: str | None, agent: str | None = None, *,
                        unattended: bool = False) -> str:
        """Start a child branch; returns the receipt for the model."""
        ...

    def send_from_tool(self, site: CallSite, message: str, to: str) -> str:
        """Deliver a message to another branch; returns the receipt for the model."""
        ...

    def agents_for_tool(self, site: CallSite) -> list[AgentRun]:
        """The subagent runs and deliveries of the caller's session."""
        ...

    def definitions_for_tool(self, site: CallSite) -> list[AgentDefinitionRow]:
        """The agent definitions usable with ``agent(agent=NAME)``."""
        ...
