"""Checkpoint commit messages: a readable subject plus trailers that rebuild the metadata."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from openprogram_lsp.core.types import Checkpoint, CheckpointFile
from openprogram_lsp.store.checkpoints.extras import (
    REASONS,
    TOO_LARGE,
    Extras,
    Unrecorded,
    dir_changes,
)

PREFIX = "Openprogram-"
MAX_SKIPPED_TRAILERS = 200
_BAD = str.maketrans({"\x00": " ", "\x1e": " ", "\x1f": " ", "\r": " "})


@dataclass(slots=True)
class CommitMeta:
    """What a checkpoint commit's trailers say."""

    id: str
    kind: str
    created_at: str
    session_id: str | None = None
    turn_id: str | None = None
    message: str = ""
    skipped: list[str] = field(default_factory=list)
    restored_from: str | None = None
    undo: str | None = None  # a restore's safety checkpoint: kept while the restore is
    undoes: str | None = None  # an undo's restore: the turn checkpoint it undid
    # permission bits of files whose mode is not git's default under the umask (0600, 0640...)
    modes: dict[str, int] = field(default_factory=dict)
    # empty directories and unrecorded files (``extras``); None: a commit made before they
    # were kept, whose empty directories are unknown
    extras: Extras | None = None
    # paths recorded as an editor buffer's unsaved text (not the disk's)
    buffers: list[str] = field(default_factory=list)

    def extras_or_skipped(self) -> Extras:
        """The extras, or for an older commit its skipped (too large) files, fingerprint
        unknown."""
        if self.extras is not None:
            return self.extras
        return Extras(files={p: Unrecorded(TOO_LARGE, -1, -1) for p in self.skipped})


def _one_line(value: str) -> str:
    return " ".join(value.translate(_BAD).split())


def build_message(meta: CommitMeta) -> str:
    """The commit message: subject naming session and turn, then the trailer block."""
    text = meta.message.translate(_BAD).strip()
    who = []
    if meta.session_id:
        who.append(f"session {meta.session_id}")
    if meta.turn_id:
        who.append(f"turn {meta.turn_id}")
    subject = f"{meta.kind}: {', '.join(who)}" if who else meta.kind
    trailers = [f"{PREFIX}Checkpoint: {meta.id}", f"{PREFIX}Kind: {meta.kind}",
                f"{PREFIX}Created: {meta.created_at}"]
    if meta.session_id:
        trailers.append(f"{PREFIX}Session: {meta.session_id}")
    if meta.turn_id:
        trailers.append(f"{PREFIX}Turn: {meta.turn_id}")
    if meta.restored_from:
        trailers.append(f"{PREFIX}Restored-From: {meta.restored_from}")
    if meta.undo:
        trailers.append(f"{PREFIX}Undo: {meta.undo}")
    if meta.undoes:
        trailers.append(f"{PREFIX}Undoes: {meta.undoes}")
    # the path is JSON (ASCII, surrogate-escaped bytes kept), so any name fits on one line
    trailers += [f"{PREFIX}Mode: {mode:04o} {json.dumps(path)}"
                 for path, mode in sorted(meta.modes.items())]
    trailers += [f"{PREFIX}Skipped: {_one_line(p)}" for p in meta.skipped[:MAX_SKIPPED_TRAILERS]]
    trailers += [f"{PREFIX}Buffer: {json.dumps(p)}" for p in meta.buffers]
    if meta.extras is not None:
        trailers.append(f"{PREFIX}Dirs: {len(meta.extras.dirs)}")
        trailers += [f"{PREFIX}Dir: {json.dumps(d)}" for d in sorted(meta.extras.dirs)]
        trailers += [f"{PREFIX}Unrecorded: {u.reason} {u.size} {u.mtime_ns} {json.dumps(p)}"
                     for p, u in sorted(meta.extras.files.items())]
    parts = [subject]
    if text:
        parts.append(text)
    parts.append("\n".join(trailers))
    return "\n\n".join(parts) + "\n"


def parse_message(body: str) -> CommitMeta | None:
    """The metadata of a checkpoint commit; None for commits that are not checkpoints."""
    paragraphs = body.strip("\n").split("\n\n")
    values: dict[str, list[str]] = {}
    for line in paragraphs[-1].splitlines():
        if line.startswith(PREFIX) and ": " in line:
            key, value = line[len(PREFIX):].split(": ", 1)
            values.setdefault(key, []).append(value)
    if "Checkpoint" not in values:
        return None

    def first(key: str) -> str | None:
        got = values.get(key)
        return got[0] if got else None

    text = "\n\n".join(paragraphs[1:-1]) if len(paragraphs) > 2 else paragraphs[0]
    modes: dict[str, int] = {}
    for value in values.get("Mode", []):
        octal, _, raw = value.partition(" ")
        try:
            path = json.loads(raw)
            if isinstance(path, str):
                modes[path] = int(octal, 8) & 0o7777
        except ValueError:
            continue
    buffers = []
    for raw in values.get("Buffer", []):
        try:
            path = json.loads(raw)
        except ValueError:
            continue
        if isinstance(path, str):
            buffers.append(path)
    return CommitMeta(
        extras=_extras(values), buffers=buffers,
        id=first("Checkpoint") or "", kind=first("Kind") or "turn",
        created_at=first("Created") or "", session_id=first("Session"),
        turn_id=first("Turn"), message=text, skipped=values.get("Skipped", []),
        restored_from=first("Restored-From"), undo=first("Undo"), undoes=first("Undoes"),
        modes=modes,
    )


def _extras(values: dict[str, list[str]]) -> Extras | None:
    if "Dirs" not in values:
        return None
    dirs: set[str] = set()
    for raw in values.get("Dir", []):
        try:
            path = json.loads(raw)
        except ValueError:
            continue
        if isinstance(path, str):
            dirs.add(path)
    files: dict[str, Unrecorded] = {}
    for value in values.get("Unrecorded", []):
        reason, size, mtime, raw = [*value.split(" ", 3), "", "", ""][:4]
        try:
            path = json.loads(raw)
            entry = Unrecorded(reason if reason in REASONS else TOO_LARGE, int(size), int(mtime))
        except ValueError:
            continue
        if isinstance(path, str):
            files[path] = entry
    return Extras(frozenset(dirs), files)


STATUS = {"A": "added", "D": "deleted", "M": "modified", "T": "modified"}


def to_checkpoint(meta: CommitMeta, parent_id: str | None,
                  changes: list[tuple[str, str]],
                  parent: CommitMeta | None = None) -> Checkpoint:
    """A Checkpoint from its trailers, its parent's id and its (status letter, path) changes;
    with the parent's trailers, the empty directories that came or went are listed too
    (``dir/``). ``skipped``: the files it could not record (too large, unreadable, special)."""
    skipped = set(meta.skipped)
    listed_skipped = list(meta.skipped)
    if meta.extras is not None:
        before = parent.extras if parent is not None else None
        if before is not None:
            changes = sorted(changes + dir_changes(before, meta.extras, changes),
                             key=lambda c: c[1])
        listed_skipped = sorted(meta.extras.files)
    unsaved = set(meta.buffers)
    files = [CheckpointFile(path=p, status=STATUS.get(s, "modified"),  # type: ignore[arg-type]
                            unsaved=True if p in unsaved else None)
             for s, p in changes if p not in skipped]
    kind = meta.kind if meta.kind in ("baseline", "turn", "safety", "restore") else "turn"
    return Checkpoint(
        id=meta.id, session_id=meta.session_id, turn_id=meta.turn_id, parent_id=parent_id,
        created_at=meta.created_at, message=meta.message, files=files,
        kind=kind,  # type: ignore[arg-type]
        skipped=listed_skipped[:MAX_SKIPPED_TRAILERS] or None,
    )
