"""A workspace's agent definitions as they are now: where they are read from (the user's
directories, then the workspace's; a later one wins a name), re-read when one changes."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openprogram_lsp.agents.definitions import WORKSPACE_DIRS, AgentDef, load_agents
from openprogram_lsp.core.fsutil import file_stamps
from openprogram_lsp.core.types import DefinitionScope

log = logging.getLogger(__name__)

AgentDirs = list[tuple[Path, str, DefinitionScope]]
"""Each directory definitions are read from, the name it is shown by, and its scope."""


@functools.lru_cache(maxsize=64)
def _agent_dirs(user: Path, workspace: str, claude: Path) -> AgentDirs:
    user_dir = user / "agents"
    claude_agents = claude / "agents"
    root = Path(workspace)
    return [(claude_agents, str(claude_agents), "user"), (user_dir, str(user_dir), "user"),
            *((root / d, d, "workspace") for d in WORKSPACE_DIRS)]


def agent_dirs(user: Path, workspace: str, claude: Path) -> AgentDirs:
    """Where definitions are read from, for the user's config directory, a workspace and
    Claude Code's user directory: Claude Code's, ours, then the workspace's (built once per
    triple, since every turn asks; handed out as copies)."""
    return list(_agent_dirs(user, workspace, claude))


class AgentCatalog:
    """Agent definitions by workspace, kept until a definition file or directory changes."""

    def __init__(self, dirs_of: Callable[[Path], AgentDirs]) -> None:
        self._dirs_of = dirs_of
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[tuple[Any, ...], dict[str, AgentDef]]] = {}

    def agents(self, real: Path) -> dict[str, AgentDef]:
        """The definitions of a workspace (its real path) by name, re-read when a directory's
        listing or any definition file in it changed."""
        dirs = self._dirs_of(real)
        paths: list[str] = []
        for directory, _, _ in dirs:
            where = str(directory)
            paths.append(where)
            with contextlib.suppress(OSError):  # a missing directory: its stat says so
                paths.extend(f"{where}/{name}" for name in sorted(os.listdir(where))
                             if name.endswith(".md") and not name.startswith("."))
        stamp = file_stamps(paths)
        with self._lock:
            cached = self._cache.get(real)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        warnings: list[str] = []
        found = load_agents(dirs, warnings)
        for warning in warnings:
            log.warning("%s", warning)
        with self._lock:
            self._cache[real] = (stamp, found)
        return found
