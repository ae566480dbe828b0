"""The linear history of a workspace's checkpoints, read back from git alone."""

from __future__ import annotations

from dataclasses import dataclass

from openprogram_lsp.core.types import Checkpoint
from openprogram_lsp.store.checkpoints.meta import CommitMeta, parse_message, to_checkpoint
from openprogram_lsp.store.checkpoints.shadow import HEAD_REF, ShadowRepo


@dataclass(slots=True)
class Entry:
    """One commit of the chain; ``meta`` is None for commits that are not checkpoints."""

    commit: str
    parent: str | None
    meta: CommitMeta | None
    checkpoint: Checkpoint | None


def load_chain(repo: ShadowRepo, start: str | None = None) -> list[Entry]:
    """Every commit reachable from the head (or ``start``), newest first, with its
    checkpoint."""
    if start is None and repo.head() is None:
        return []
    out = repo.git(["-c", "log.showRoot=false", "log", "-z", "--first-parent", "--no-renames",
                    "--name-status", "--format=%x1e%H%x1f%P%x1f%B%x1f", start or HEAD_REF])
    raw: list[tuple[str, str | None, CommitMeta | None, list[tuple[str, str]]]] = []
    for chunk in out.split(b"\x1e")[1:]:
        commit_b, parents, body, rest = chunk.split(b"\x1f", 3)
        commit = commit_b.decode()
        parent = parents.decode().split()[0] if parents.strip() else None
        meta = parse_message(body.decode("utf-8", "replace"))
        tokens = [t for t in rest.lstrip(b"\0\n").split(b"\0")]
        changes = []
        for i in range(0, len(tokens) - 1, 2):
            status = tokens[i].decode().strip()
            if status:
                changes.append((status[0], tokens[i + 1].decode("utf-8", "surrogateescape")))
        raw.append((commit, parent, meta, changes if parent else []))
    ids = {c: (m.id if m and m.kind != "base" else None) for c, _, m, _ in raw}
    metas = {c: m for c, _, m, _ in raw}
    entries = []
    for commit, parent, meta, changes in raw:
        checkpoint = None
        if meta is not None and meta.kind != "base":
            checkpoint = to_checkpoint(meta, ids.get(parent) if parent else None, changes,
                                       metas.get(parent) if parent else None)
        entries.append(Entry(commit, parent, meta, checkpoint))
    return entries


def undone_turns(entries: list[Entry]) -> dict[str, str]:
    """Turn checkpoint id -> the restore checkpoint that undid it, for undos still standing.

    An undo's restore checkpoint names the turn (``undoes``) and the safety checkpoint taken
    before it (``undo``); a later restore of that safety checkpoint (Undo Restore, the CLI's
    "redo with") takes the undo back, and the turn counts as not undone again.
    """
    undone: dict[str, str] = {}
    by_safety: dict[str, list[tuple[str, str]]] = {}
    for entry in reversed(entries):  # oldest first
        meta = entry.meta
        if meta is None or meta.kind != "restore":
            continue
        if meta.restored_from is not None:
            for turn, undo_id in by_safety.pop(meta.restored_from, []):
                if undone.get(turn) == undo_id:
                    del undone[turn]
        if meta.undoes:
            undone[meta.undoes] = meta.id
            if meta.undo:
                by_safety.setdefault(meta.undo, []).append((meta.undoes, meta.id))
    return undone


def marked(checkpoint: Checkpoint, undone: dict[str, str]) -> Checkpoint:
    """``checkpoint`` with ``undone_by`` set when ``undone`` names it."""
    by = undone.get(checkpoint.id)
    return checkpoint if by is None else checkpoint.model_copy(update={"undone_by": by})
