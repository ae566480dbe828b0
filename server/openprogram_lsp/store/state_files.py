"""Every file the store keeps beside git's own: its one owner module and its one recovery rule.

A session's ``.git/openprogram-*`` files and the ``sessions/.*`` files are written by the
owner named here and by no other module (``tests/store/test_state_files.py`` checks that each
name is spelled in its owner alone, and that a used state root holds no file missing here).
A *derived* file is never committed and may be lost or torn at any time: the node files, the
meta and each session's git history are the truth, and the rule below says how a reader gets
back to it. ``docs/decisions/store-index.md`` records why these are files and not one index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class StateFile:
    """One kind of file the store keeps."""

    name: str
    where: Literal["session", "sessions"]  # a session's ``.git/``, or the sessions directory
    owner: str  # the module that writes it, under ``openprogram_lsp.store``
    kind: Literal["derived", "record", "lock"]
    recovery: str


FILES = (
    StateFile(
        "openprogram-nodes", "session", "node_log", "derived",
        "Opening the session (SessionIndex.load) reads the newest shard and the seq range: "
        "node files without a line are read and their lines appended; a damaged or missing "
        "log is rebuilt from every node file. Every other reader (cold_page, page_snapshot) "
        "refuses on any doubt and opens the session that way."),
    StateFile(
        ".listing", "sessions", "session_listing", "derived",
        "When the sessions directory's mtime moves: sessions without a line are read from "
        "their meta and appended, vanished ones get a tombstone; a torn line is skipped."),
    StateFile(
        "openprogram-page", "session", "page_snapshot", "derived",
        "Served only while every stamp it recorded is unchanged and its checksum holds; "
        "anything else reads the page the ordinary way and the keeper writes it again."),
    StateFile(
        "openprogram-checkpoints", "session", "node_records", "derived",
        "A superset of the checkpoints the nodes name; missing: rebuilt once from the bodies."),
    StateFile(
        "openprogram-rules-forks", "session", "node_records", "derived",
        "A superset of the rules forks; missing or torn: None, readers scan the nodes."),
    StateFile(
        "openprogram-images", "session", "image_refs", "derived",
        "A superset of the image hashes the nodes name; missing: the node files are read."),
    StateFile(
        "openprogram-meta", "session", "meta_slots", "record",
        "Two checked slots: the valid one of the highest generation; none valid: meta.json "
        "(written at creation), and the next write rewrites the slot file whole."),
    StateFile(
        "openprogram-journal", "session", "session_repo", "record",
        "The paths written since its last mark: the next commit (any process) commits them; "
        "a kill before the mark leaves them pending, so no write is left out of a commit."),
    StateFile(
        ".spare-", "sessions", "spare_session", "derived",
        "A new session's directory made ahead (``.spare-<pid>-<random>``; a dot: no session): "
        "used by its process's next new session, else removed by the next process that makes "
        "one once its maker is gone; a half-made one ends in ``.making`` and is never used."),
    StateFile(
        ".listing-writers", "sessions", "session_listing", "lock",
        "An flock: released by the kernel when its holder dies."),
    StateFile(
        "openprogram-commit.lock", "session", "session_store", "lock",
        "An owned lock (owned_lock): a dead owner's lock is taken over."),
    StateFile(
        "openprogram-maintenance", "session", "pack_maintenance", "lock",
        "An flock: released by the kernel when its holder dies."),
)
"""Every state file, by name."""

BY_NAME = {f.name: f for f in FILES}
