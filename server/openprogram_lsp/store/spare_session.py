"""A new session's directory made ahead, so the first turn of a server does not make it.

A session is a directory holding a git repository and a few record files: ~18 directories
and files before its meta is written, tens of ms on a loaded disk, on the way to a new
session's first edit (issue 33). The server's warm-up makes one such skeleton ahead
(``SpareSession.prepare``) under ``sessions/.spare-<pid>-<random>`` (names starting with a dot
are no session: the listing and the image collector skip them), complete before it gets its
final name; ``create_session`` renames it to the new session's directory (one rename) and
writes the meta, or makes the directory as before when there is none.

Only the process that made a spare uses it. ``prepare`` removes the spares of processes that
are gone (a crash between making and using one).
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import threading
from pathlib import Path

from openprogram_lsp.store import image_refs, node_records
from openprogram_lsp.store.node_log import NODE_LOG
from openprogram_lsp.store.owner import pid_alive
from openprogram_lsp.store.session_repo import SessionRepo, init_repository

log = logging.getLogger(__name__)

PREFIX = ".spare-"
GITIGNORE = "*.tmp\n.*.tmp\n"


def make_skeleton(root: Path) -> None:
    """Everything of a new session's directory but its meta (``create_session``'s first
    part)."""
    (root / "nodes").mkdir(parents=True, exist_ok=True)
    init_repository(root)
    SessionRepo(root).write(".gitignore", GITIGNORE)
    node_records.create(root)
    (root / ".git" / image_refs.REFS).touch()
    (root / ".git" / NODE_LOG).touch()


class SpareSession:
    """At most one skeleton of this process under a sessions directory."""

    def __init__(self, sessions: Path) -> None:
        self.sessions = sessions
        self._ready: Path | None = None
        self._lock = threading.Lock()

    def prepare(self) -> None:
        """Make the skeleton unless one is ready (blocking: a warm-up runs it off the loop)."""
        with self._lock:
            if self._ready is not None:
                return
        self._remove_orphans()
        name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        making = self.sessions / f"{name}.making"
        try:
            make_skeleton(making)
            os.rename(making, self.sessions / name)
        except OSError as exc:
            log.info("no spare session made: %s", exc)
            shutil.rmtree(making, ignore_errors=True)
            return
        with self._lock:
            if self._ready is None:
                self._ready = self.sessions / name
                return
        shutil.rmtree(self.sessions / name, ignore_errors=True)  # another call made one

    def take(self, root: Path) -> bool:
        """Give the skeleton the name ``root`` (which must not exist yet); False when there
        is none, or it cannot be moved (then ``root`` is made as usual)."""
        with self._lock:
            spare, self._ready = self._ready, None
        if spare is None:
            return False
        try:
            os.rename(spare, root)
        except OSError as exc:
            log.info("spare session not used: %s", exc)
            shutil.rmtree(spare, ignore_errors=True)
            return False
        return True

    def _remove_orphans(self) -> None:
        """Remove the spares (and half-made ones) of processes no longer running."""
        try:
            names = [e.name for e in os.scandir(self.sessions) if e.name.startswith(PREFIX)]
        except OSError:
            return
        for name in names:
            pid = name[len(PREFIX):].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
                shutil.rmtree(self.sessions / name, ignore_errors=True)
