"""Two small per-session records of what the nodes name, kept as nodes are written.

- ``.git/openprogram-checkpoints``: the checkpoint ids the session's nodes record, one a line
  (what checkpoint pruning must keep). Appended after a node naming one is written.
- ``.git/openprogram-rules-forks``: the ids (JSON strings, one a line) of user nodes written
  with rules ``reset`` or ``copy``, appended before the node's file, so after a restart a
  session's rules scopes come from it instead of from every node.

Both are derived and never committed; each is a superset of what the nodes on disk say (an
extra line only keeps a checkpoint longer or costs one body read). Their recovery rules
(``store/state_files.py``): a missing checkpoint record is rebuilt once from the node bodies;
a missing or torn rules record answers None and the reader looks at the nodes themselves.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path

from openprogram_lsp.core.fsutil import atomic_write
from openprogram_lsp.core.types import Node

CHECKPOINT_REFS = "openprogram-checkpoints"
RULES_FORKS = "openprogram-rules-forks"
RULES_CHOICES_SCOPED = ("reset", "copy")


def create(root: Path) -> None:
    """Start both (empty) records of a new session."""
    (root / ".git" / CHECKPOINT_REFS).touch()
    (root / ".git" / RULES_FORKS).touch()


def note_checkpoint(root: Path, node: Node) -> None:
    """Add the checkpoint a node just written names (one append; none when it names none)."""
    cid = node.metadata.get("checkpointId")
    if isinstance(cid, str) and cid.isprintable() and cid.strip() == cid and cid:
        with suppress(OSError):  # one append with plain os calls (once a write turn)
            fd = os.open(f"{root}/.git/{CHECKPOINT_REFS}",
                         os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
            try:
                os.write(fd, (cid + "\n").encode("utf-8", "surrogateescape"))
            finally:
                os.close(fd)


def checkpoint_ids(root: Path, nodes: Callable[[], Iterable[Node]]) -> set[str]:
    """The checkpoint ids a session's nodes record; a session without the record (older than
    it) has ``nodes()`` read once and the record written from them."""
    path = root / ".git" / CHECKPOINT_REFS
    try:
        return set(path.read_text("utf-8", "replace").split())
    except FileNotFoundError:
        pass
    ids = {str(n.metadata["checkpointId"]) for n in nodes()
           if isinstance(n.metadata.get("checkpointId"), str)}
    with suppress(OSError):
        atomic_write(path, "".join(f"{i}\n" for i in sorted(ids)))
    return ids


def note_rules_fork(root: Path, node: Node) -> None:
    """Record a user node that starts a rules scope, before its file is written (so the record
    is a superset of the nodes on disk). A session without the record (older than it) is
    left without one: its readers look at the nodes themselves."""
    if node.role != "user" or node.metadata.get("rules") not in RULES_CHOICES_SCOPED:
        return
    try:
        fd = os.open(root / ".git" / RULES_FORKS, os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
        return
    try:
        os.write(fd, (json.dumps(node.id) + "\n").encode("ascii"))
    finally:
        os.close(fd)


def rules_forks(root: Path) -> frozenset[str] | None:
    """Ids of the session's user nodes that may start a rules scope (a superset: check their
    bodies), or None when the session keeps no such record or it is unreadable."""
    try:
        data = (root / ".git" / RULES_FORKS).read_bytes()
    except OSError:
        return None
    out: set[str] = set()
    for line in data.splitlines():
        try:
            nid = json.loads(line)
        except ValueError:
            return None  # a torn line: this record cannot be trusted
        if not isinstance(nid, str):
            return None
        out.add(nid)
    return frozenset(out)
