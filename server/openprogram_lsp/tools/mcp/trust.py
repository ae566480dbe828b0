"""Trust decisions about a workspace's ``.mcp.json`` servers: one per exact definition.

Stored under ``$OPENPROGRAM_HOME/mcp-trust/<workspace key>.json``, outside every workspace, so
a repository cannot trust its own servers. A changed definition is a new question.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from openprogram_lsp.core.fsutil import atomic_write

TrustDecision = Literal["allow", "deny"]


@dataclass(frozen=True, slots=True)
class TrustEntry:
    """A remembered answer for one server definition."""

    server: str
    fingerprint: str
    decision: TrustDecision
    created_at: str
    command: str

    def to_dict(self) -> dict[str, Any]:
        return {"server": self.server, "fingerprint": self.fingerprint,
                "decision": self.decision, "createdAt": self.created_at,
                "command": self.command}


class TrustBook:
    """Remembered trust answers of one workspace; answers for this process only stay in memory."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, TrustEntry] = {}
        self._session: dict[str, tuple[str, TrustDecision]] = {}
        if path is not None:
            self._load(path)

    @staticmethod
    def for_workspace(home: Path, workspace: Path) -> TrustBook:
        """The persisted trust book of a workspace."""
        key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
        return TrustBook(home / "mcp-trust" / f"{key}.json")

    def _load(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return
        for item in data.get("servers", []) if isinstance(data, dict) else []:
            try:
                entry = TrustEntry(str(item["server"]), str(item["fingerprint"]),
                                   "allow" if item["decision"] == "allow" else "deny",
                                   str(item.get("createdAt", "")), str(item.get("command", "")))
            except (KeyError, TypeError):
                continue
            self._entries[entry.fingerprint] = entry

    def decision(self, fingerprint: str) -> TrustDecision | None:
        """The answer given for this exact definition, if any."""
        with self._lock:
            if fingerprint in self._session:
                return self._session[fingerprint][1]
            entry = self._entries.get(fingerprint)
            return entry.decision if entry else None

    def remember(self, server: str, fingerprint: str, decision: TrustDecision, *,
                 command: str, persist: bool) -> None:
        """Record an answer; ``persist=False`` keeps it for this process only."""
        with self._lock:
            if not persist:
                self._session[fingerprint] = (server, decision)
                return
            self._session.pop(fingerprint, None)
            # one standing answer per server name: a new definition replaces the old answer
            self._entries = {k: e for k, e in self._entries.items() if e.server != server}
            self._entries[fingerprint] = TrustEntry(
                server, fingerprint, decision, datetime.now(UTC).isoformat(timespec="seconds"),
                command)
            self._save()

    def entries(self) -> list[TrustEntry]:
        """Remembered answers, oldest first."""
        with self._lock:
            return sorted(self._entries.values(), key=lambda e: e.created_at)

    def revoke(self, server: str) -> bool:
        """Forget every answer about a server (it asks again next time); False if none."""
        with self._lock:
            before = len(self._entries) + len(self._session)
            self._entries = {k: e for k, e in self._entries.items() if e.server != server}
            self._session = {k: v for k, v in self._session.items() if v[0] != server}
            changed = before != len(self._entries) + len(self._session)
            if changed:
                self._save()
            return changed

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"servers": [e.to_dict() for e in self._entries.values()]}
        atomic_write(self.path, json.dumps(payload, indent=1))
