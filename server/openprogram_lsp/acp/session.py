"""What the agent keeps per ACP session: workspace, permission mode, the running prompt."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
    """One session opened over this connection (by ``session/new`` or ``session/load``)."""

    session_id: str
    workspace: Path
    mode: PermissionMode
    control: TurnControl | None = None
    stream: TurnStream | None = None

    @property
    def running(self) -> bool:
        """Whether a prompt of this session is in flight."""
        return self.control is not None
