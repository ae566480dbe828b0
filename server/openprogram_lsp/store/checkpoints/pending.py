"""A turn's checkpoint taken at its end and committed after the first walk (issue 33).

A turn that ends while the workspace's first whole-tree walk still runs does not wait for it.
Its after-state is captured at once: every path the turn wrote and every path noted as changed
up to that moment (the file watcher's, the tools'), each as (git mode, blob id) or "absent",
its exact permission bits, and the directories an absent path left empty. The blobs go into
the object store now (one pack), and a record of the pending checkpoint (its id, session, turn,
message, the captured states and the turn's deferred baseline, blobs included) is written under
the store's ``pending/`` directory. The turn ends; its checkpoint id is known (the node names
it), its files are not (they are a diff against the baseline, which is built on the walk).

When the walk is done, the baseline and then the turn's checkpoint are committed in order from
what was captured (``CheckpointStore._settle_pending``): the walk's tree, each pending turn's
captured states on top (and its recorded before-states for its baseline). A path noted again
after the capture stays noted for the next checkpoint: nothing that changed after the turn's end
is attributed to it. A process that dies before the walk ends leaves its records; the next
process commits them after its own walk (``load``), only for a process that is gone.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.core.fsutil import atomic_write
from openprogram_lsp.core.types import Checkpoint
from openprogram_lsp.store.checkpoints.deferred import DeferredBaseline, Leaf, Unrecordable
from openprogram_lsp.store.checkpoints.modes import EXEC, PLAIN

log = logging.getLogger(__name__)

DIR = "pending"
"""The store's directory of pending turn checkpoints (one JSON record each)."""
MAX_CAPTURED = 64 * 1024 * 1024
"""Bytes read at most for one capture; past it the turn's end waits for the walk."""

Done = Callable[[Checkpoint | None], None]


@dataclass(slots=True)
class Capture:
    """Paths as they were at a turn's end."""

    leaves: dict[str, Leaf | None] = field(default_factory=dict)
    """Path -> (git mode, blob id), or None: absent."""
    perms: dict[str, int] = field(default_factory=dict)
    """Exact permission bits of the captured regular files."""
    empty_dirs: set[str] = field(default_factory=set)
    """Directories an absent captured path left empty (before the ignore rules)."""


def capture(workspace: str, turn_paths: Iterable[str], noted: Iterable[str], max_bytes: int,
            write_blob: Callable[[bytes], str]) -> tuple[Capture, set[str]]:
    """The capture of the turn's paths and the noted ones, and the noted paths it could not
    take (a directory, a special or too large file: left noted for the next checkpoint).
    Unrecordable when one of the turn's own paths cannot be captured."""
    out = Capture()
    left: set[str] = set()
    held = 0
    own = set(turn_paths)
    for rel in sorted(own | set(noted)):
        full = os.path.join(workspace, rel)
        try:
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                out.leaves[rel] = None
                parent = os.path.dirname(rel)
                if parent:
                    with _quiet():
                        if not os.listdir(os.path.join(workspace, parent)):
                            out.empty_dirs.add(parent)
                continue
            if stat.S_ISLNK(st.st_mode):
                out.leaves[rel] = ("120000", write_blob(os.fsencode(os.readlink(full))))
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes \
                    or held + st.st_size > MAX_CAPTURED:
                raise Unrecordable(f"{rel}: not a regular file within {max_bytes} bytes")
            with open(full, "rb") as f:
                data = f.read()
            held += len(data)
            out.leaves[rel] = (EXEC if st.st_mode & 0o100 else PLAIN, write_blob(data))
            out.perms[rel] = stat.S_IMODE(st.st_mode)
        except (Unrecordable, OSError) as exc:
            if rel in own:
                raise Unrecordable(str(exc)) from None
            left.add(rel)
    return out, left


class _quiet:
    """Ignore an OSError (a directory that went away meanwhile)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> bool:
        return kind is not None and issubclass(kind, OSError)


@dataclass(slots=True)
class PendingTurn:
    """One turn's checkpoint, captured and not yet committed."""

    checkpoint_id: str
    session_id: str
    turn_id: str
    message: str
    created_at: str
    capture: Capture
    baseline: DeferredBaseline | None
    """The turn's session baseline, deferred: committed just before the turn's checkpoint."""
    record: Path | None = None
    done: Done | None = None
    """Called with the committed checkpoint (in the thread that commits it)."""

    def save(self, directory: Path, seq: int) -> None:
        """Write the record (``<pid>-<seq>-<turn>.json``) atomically."""
        directory.mkdir(exist_ok=True)
        path = directory / f"{os.getpid()}-{seq:06d}-{self.checkpoint_id}.json"
        atomic_write(path, json.dumps(self._wire(), sort_keys=True))
        self.record = path

    def drop(self) -> None:
        """Remove the record (the checkpoint is committed)."""
        if self.record is not None:
            with _quiet():
                self.record.unlink()
            self.record = None

    def _wire(self) -> dict[str, Any]:
        cap = self.capture
        out: dict[str, Any] = {
            "version": 1, "checkpoint_id": self.checkpoint_id, "session_id": self.session_id,
            "turn_id": self.turn_id, "message": self.message, "created_at": self.created_at,
            "leaves": {p: list(v) if v else None for p, v in cap.leaves.items()},
            "perms": cap.perms, "empty_dirs": sorted(cap.empty_dirs)}
        base = self.baseline
        if base is not None:
            out["baseline"] = {
                "session_id": base.session_id,
                "leaves": {p: list(v) if v else None for p, v in (base.written or {}).items()},
                "perms": base.perms, "new_dirs": sorted(base.new_dirs)}
        return out


def load(directory: Path, alive: Callable[[int], bool]) -> list[PendingTurn]:
    """The records left by processes that are gone, oldest first (a record that cannot be
    read is logged and left in place)."""
    try:
        names = sorted(os.listdir(directory), key=_order)
    except OSError:
        return []
    out: list[PendingTurn] = []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            pid = int(name.split("-", 1)[0])
        except ValueError:
            continue
        if alive(pid):
            continue
        path = directory / name
        try:
            out.append(_from_wire(json.loads(path.read_text("utf-8")), path))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("pending checkpoint %s cannot be read (%s): left as it is", path, exc)
    return out


def _order(name: str) -> tuple[int, str]:
    parts = name.split("-")
    try:
        return int(parts[1]), name
    except (IndexError, ValueError):
        return 0, name


def _leaves(raw: dict[str, Any]) -> dict[str, Leaf | None]:
    out: dict[str, Leaf | None] = {}
    for path, leaf in raw.items():
        if leaf is None:
            out[str(path)] = None
        else:
            mode, sha = leaf
            out[str(path)] = (str(mode), str(sha))
    return out


def _from_wire(raw: dict[str, Any], path: Path) -> PendingTurn:
    if raw.get("version") != 1:
        raise ValueError(f"unknown record version {raw.get('version')!r}")
    cap = Capture(_leaves(raw["leaves"]), {str(k): int(v) for k, v in raw["perms"].items()},
                  {str(d) for d in raw["empty_dirs"]})
    base = None
    if isinstance(raw.get("baseline"), dict):
        b = raw["baseline"]
        base = DeferredBaseline(str(b["session_id"]))
        base.written = _leaves(b["leaves"])
        base.before = {p: None if v is None else (v[0], b"") for p, v in base.written.items()}
        base.perms = {str(k): int(v) for k, v in b["perms"].items()}
        base.new_dirs = {str(d) for d in b["new_dirs"]}
    return PendingTurn(str(raw["checkpoint_id"]), str(raw["session_id"]), str(raw["turn_id"]),
                       str(raw["message"]), str(raw["created_at"]), cap, base, path)
