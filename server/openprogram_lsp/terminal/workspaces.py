"""Which workspace a command acts on: --workspace, the session's own, or the current one."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from openprogram_lsp.core.ids import is_safe_id
from openprogram_lsp.terminal.errors import CliError


def existing_workspace(path: Path) -> Path:
    """The resolved directory; CliError when it does not exist or is not a directory."""
    full = path.expanduser()
    if not full.exists():
        raise CliError(f"workspace {path} does not exist",
                       "create it first, or pass --workspace DIR with an existing directory")
    if not full.is_dir():
        raise CliError(f"workspace {path} is not a directory", "pass --workspace DIR")
    return full.resolve()


def require_git() -> None:
    """Sessions and checkpoints are git repositories: fail early when git is missing."""
    if shutil.which("git") is None:
        raise CliError("git was not found on PATH",
                       "install git (Debian/Ubuntu: sudo apt-get install git) and try again")


def session_meta(home: Path, sid: str) -> dict[str, Any]:
    """A session's meta read straight from disk; CliError for an unknown id."""
    from openprogram_lsp.store import meta_slots  # not at import: `--help` loads no store

    root = home / "sessions" / sid if is_safe_id(sid) else None
    try:
        if root is not None:
            data = meta_slots.read(root)
            if isinstance(data, dict):
                return data
    except (OSError, ValueError):
        pass
    raise CliError(f"unknown session id {sid!r}", "'openprogram-lsp sessions' lists them")


def session_workspace(home: Path, sid: str) -> Path | None:
    """The workspace a session was started in (None for sessions that predate the field)."""
    ws = session_meta(home, sid).get("workspace")
    return Path(ws) if isinstance(ws, str) and ws else None


def choose_workspace(*, explicit: Path | None, home: Path, session: str | None,
                     force: bool = False) -> Path:
    """--workspace, else the session's workspace, else the current directory.

    A --workspace that differs from the session's is refused unless ``force``: acting on
    the wrong directory is the one mistake a turn cannot take back.
    """
    own = session_workspace(home, session) if session else None
    if explicit is not None:
        chosen = existing_workspace(explicit)
        if own is not None and not force and _same(own, chosen) is False:
            raise CliError(f"session {session} belongs to workspace {own}, not {chosen}",
                           "drop --workspace to use the session's, or add --force-workspace")
        return chosen
    if own is not None:
        if not own.is_dir():
            raise CliError(f"the workspace of session {session}, {own}, no longer exists",
                           "pass --workspace DIR --force-workspace to continue it elsewhere")
        return own.resolve()
    return Path.cwd().resolve()


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _metas(home: Path) -> list[dict[str, Any]]:
    """Every session's meta, most recently updated first."""
    from openprogram_lsp.store import meta_slots  # not at import: `--help` loads no store

    root = home / "sessions"
    metas: list[dict[str, Any]] = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    for entry in entries:
        try:
            data = meta_slots.read(entry)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            data.setdefault("id", entry.name)
            metas.append(data)
    metas.sort(key=lambda m: str(m.get("updatedAt", "")), reverse=True)
    return metas


def known_sessions(home: Path) -> list[tuple[str, Path]]:
    """(session id, its existing workspace), most recently updated first."""
    out: list[tuple[str, Path]] = []
    for m in _metas(home):
        ws, sid = m.get("workspace"), m.get("id")
        if isinstance(ws, str) and ws and isinstance(sid, str) and Path(ws).is_dir():
            out.append((sid, Path(ws).resolve()))
    return out


def known_workspaces(home: Path) -> list[Path]:
    """Workspaces that sessions were started in, most recently used first (existing ones)."""
    out: list[Path] = []
    for _, p in known_sessions(home):
        if p not in out:
            out.append(p)
    return out
