"""What the agent keeps per ACP session: workspace, settings, the running prompt, its branch."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import SessionMode, SessionModeState

from openprogram_lsp.acp.stream import TurnStream
from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.core.types import PERMISSION_MODES, PermissionMode

MODE_INFO: dict[str, tuple[str, str]] = {
    "ask": ("Ask", "Reads run; edits and commands ask first"),
    "accept-edits": ("Accept edits", "Edits run without asking; commands ask"),
    "plan": ("Plan", "Read-only: edits and commands are refused"),
    "bypass": ("Bypass", "Everything runs without asking"),
}
assert set(MODE_INFO) == set(PERMISSION_MODES)


def modes(current: PermissionMode) -> SessionModeState:
    """Our permission modes as ACP session modes."""
    return SessionModeState(current_mode_id=current, available_modes=[
        SessionMode(id=m, name=MODE_INFO[m][0], description=MODE_INFO[m][1])
        for m in PERMISSION_MODES])


@dataclass(slots=True)
class AcpSession:
    """One ACP session opened over this connection (``session/new``, ``load``, ``resume`` or
    ``fork``).

    ``session_id`` is the ACP id: a stored session's id, or for a fork ``<sid>~<key>``
    (``forks``), which follows that fork's branch of the stored session ``store_id``.
    ``stored`` is False until the first message creates the session in the store."""

    session_id: str
    workspace: Path
    mode: PermissionMode
    store_id: str = ""
    fork_key: str | None = None
    stored: bool = True
    model: str | None = None
    effort: str | None = None
    control: TurnControl | None = None
    stream: TurnStream | None = None
    told: dict[str, Any] = field(default_factory=dict)  # the settings this client was shown
    commands: list[str] = field(default_factory=list)  # the slash commands it was shown

    def __post_init__(self) -> None:
        if not self.store_id:
            self.store_id = self.session_id

    @property
    def running(self) -> bool:
        """Whether a prompt of this session is in flight."""
        return self.control is not None
