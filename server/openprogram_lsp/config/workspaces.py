"""Settings per workspace: each folder's ``.openprogram/config.toml``, re-read on change."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from openprogram_lsp.config.files import user_config_path, workspace_config_path
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

    def __init__(self, load: Callable[[Path], Settings],
                 env: Mapping[str, str] | None = None) -> None:
        self._load = load
        self._env = os.environ if env is None else env
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[tuple[Stamp, Stamp], Settings]] = {}

    def __call__(self, workspace: Path) -> Settings:
        """The settings of ``workspace``; ConfigError naming the file when one is invalid."""
        root = workspace.resolve()
        stamp = (_stamp(workspace_config_path(root)), _stamp(user_config_path(self._env)))
        with self._lock:
            hit = self._cache.get(root)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        settings = self._load(root)
        with self._lock:
            self._cache[root] = (stamp, settings)
        return settings
