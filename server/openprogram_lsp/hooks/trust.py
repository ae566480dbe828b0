"""Which workspace definitions (hooks, agent definitions) the user approved or refused.

One JSON file per workspace under ``$OPENPROGRAM_HOME/trust/``: definition id -> ``trusted``
or ``rejected``. An id fingerprints the whole definition, so a changed command is a new
definition that must be approved again. User-level definitions need no approval.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Literal

from openprogram_lsp.core.fsutil import atomic_write

TrustState = Literal["trusted", "rejected", "unknown"]


class TrustStore:
    """Approvals of workspace definitions, persisted per workspace."""

    def __init__(self, home: Path) -> None:
        self.root = home / "trust"
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[int, dict[str, str]]] = {}

    def _path(self, workspace: Path) -> Path:
        key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
        return self.root / f"{key}.json"

    def _load(self, workspace: Path) -> dict[str, str]:
        """The states, re-read when another process (the CLI) changed the file."""
        key = workspace.resolve()
        path = self._path(workspace)
        try:
            stamp = path.stat().st_mtime_ns
        except FileNotFoundError:
            stamp = 0
        cached = self._cache.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            data = json.loads(path.read_text("utf-8"))
            raw = data.get("definitions", {}) if isinstance(data, dict) else {}
        except (FileNotFoundError, ValueError):
            raw = {}
        states = {str(k): v for k, v in raw.items() if v in ("trusted", "rejected")}
        self._cache[key] = (stamp, states)
        return states

    def state(self, workspace: Path, definition_id: str) -> TrustState:
        """The user's decision on a definition of this workspace."""
        with self._lock:
            value = self._load(workspace).get(definition_id)
        return value if value in ("trusted", "rejected") else "unknown"  # type: ignore[return-value]

    def known(self, workspace: Path) -> dict[str, str]:
        """Every decision recorded for a workspace (id -> state)."""
        with self._lock:
            return dict(self._load(workspace))

    def set(self, workspace: Path, definition_id: str, state: TrustState) -> None:
        """Record (``unknown`` forgets, so the user is asked again) and persist."""
        with self._lock:
            states = self._load(workspace)
            if state == "unknown":
                states.pop(definition_id, None)
            else:
                states[definition_id] = state
            path = self._path(workspace)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, json.dumps({"workspace": str(workspace.resolve()),
                                           "definitions": states}, indent=1, sort_keys=True))
            self._cache[workspace.resolve()] = (path.stat().st_mtime_ns, states)
