"""Settings per workspace: each folder's ``.openprogram/config.toml``, re-read on change."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from openprogram_lsp.config.files import workspace_config_path
from openprogram_lsp.config.loader import Settings

Stamp = tuple[int, int] | None


def _stamp(path: Path) -> Stamp:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class WorkspaceSettings:
    """``load(workspace)`` cached per folder until its or the user's config file changes."""

    def __init__(self, load: Callable[[Path], Settings], user_file: Path | None = None) -> None:
        """``user_file``: the user config file ``load`` reads (``Settings.user_path``)."""
        self._load = load
        self._user_file = user_file
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[tuple[Stamp, Stamp], Settings]] = {}

    def __call__(self, workspace: Path) -> Settings:
        """The settings of ``workspace``; ConfigError naming the file when one is invalid."""
        root = workspace.resolve()
        user = _stamp(self._user_file) if self._user_file is not None else None
        stamp = (_stamp(workspace_config_path(root)), user)
        with self._lock:
            hit = self._cache.get(root)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        settings = self._load(root)
        with self._lock:
            self._cache[root] = (stamp, settings)
        return settings
