"""Retention: drop old checkpoints by count and age, keeping those a session still references."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from openprogram_lsp.core.ids import now_iso
from openprogram_lsp.store.checkpoints.chain import Entry
from openprogram_lsp.store.checkpoints.meta import CommitMeta, build_message, parse_message
from openprogram_lsp.store.checkpoints.objects import (
    commit_tree,
    read_object,
    write_commit,
    write_object,
)
from openprogram_lsp.store.checkpoints.shadow import ShadowRepo
from openprogram_lsp.store.gitobj import trees as _trees
from openprogram_lsp.store.gitobj.trees import ObjectStore


def created_at(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def choose_drops(entries: list[Entry], max_count: int | None, max_age_days: float | None,
                 keep_ids: set[str], *, force: bool) -> set[str]:
    """Commits of the checkpoints to drop; never the newest one (the index's base).

    A restore checkpoint is never dropped for the count, only for its age, and the safety
    checkpoint it undoes to is kept as long as the restore checkpoint is: undo never expires
    while the restore it undoes is listed.
    """
    cutoff = (datetime.now(UTC) - timedelta(days=max_age_days)
              if max_age_days is not None else None)
    drops: set[str] = set()
    undo_points: set[str] = set()
    checkpoints = [e for e in entries if e.checkpoint is not None]
    for n, entry in enumerate(checkpoints):  # newest first: a restore before its undo point
        assert entry.checkpoint is not None
        cid = entry.checkpoint.id
        if n == 0 or (not force and (cid in keep_ids or cid in undo_points)):
            pass
        else:
            too_many = (max_count is not None and n >= max(max_count, 1)
                        and (force or entry.checkpoint.kind != "restore"))
            created = created_at(entry.checkpoint.created_at)
            too_old = cutoff is not None and created is not None and created < cutoff
            if too_many or too_old:
                drops.add(entry.commit)
                continue
        if entry.meta is not None and entry.meta.undo:
            undo_points.add(entry.meta.undo)
    return drops


def _recommit(repo: ShadowRepo, commit: str, parent: str | None,
              sink: ObjectStore | None = None) -> str:
    """The same tree, message and dates as ``commit``, on a new parent (written in process,
    loose or into ``sink``)."""
    _kind, body = read_object(repo, commit)
    header, _, message = body.partition(b"\n\n")
    lines = [ln for ln in header.split(b"\n") if not ln.startswith(b"parent ")]
    if parent:
        lines.insert(1, b"parent " + parent.encode())
    body = b"\n".join(lines) + b"\n\n" + message
    return sink.write("commit", body) if sink is not None else write_object(repo, "commit", body)


def _base(repo: ShadowRepo, dropped: str, parent: str | None, child: Entry,
          sink: ObjectStore | None = None) -> str:
    """A hidden commit holding a dropped parent's tree, so a kept child's diff stays exact."""
    child_id = child.meta.id if child.meta else child.commit
    created = now_iso()
    _kind, body = read_object(repo, dropped)
    was = parse_message(body.partition(b"\n\n")[2].decode("utf-8", "replace"))
    meta = CommitMeta(id=f"base-{child_id}", kind="base", created_at=created,
                      message=f"Parent state of checkpoint {child_id}",
                      modes=was.modes if was is not None else {},
                      extras=was.extras if was is not None else None)
    epoch = int(datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp())
    if sink is not None:
        return _trees.write_commit(sink, commit_tree(repo, dropped), [parent] if parent else [],
                                   build_message(meta), epoch)
    return write_commit(repo, commit_tree(repo, dropped), parent, build_message(meta), epoch)


def rewrite_chain(repo: ShadowRepo, entries: list[Entry], drops: set[str],
                  sink: ObjectStore | None = None) -> str:
    """Write the chain without the dropped commits (new objects only, loose or into ``sink``,
    no ref moves); returns its new head. Needs no lock: objects are immutable and the head
    moves elsewhere."""
    oldest_first = list(reversed(entries))
    new_of: dict[str, str] = {}
    prev: str | None = None
    for i, entry in enumerate(oldest_first):
        # a background pass: give the GIL back at every commit, so a turn of the same process
        # that waits for it (after each of its file writes) waits for one commit, not 5 ms
        time.sleep(0)
        if entry.commit in drops:
            continue
        if entry.checkpoint is None:  # a hidden base: kept only while its child is kept
            child = oldest_first[i + 1] if i + 1 < len(oldest_first) else None
            if child is None or child.commit in drops:
                continue
        if entry.parent is None:
            want = None
        elif entry.parent in new_of:
            want = new_of[entry.parent]
        elif entry.checkpoint is not None:
            want = _base(repo, entry.parent, prev, entry, sink)
        else:
            want = prev
        new = entry.commit if want == entry.parent else _recommit(repo, entry.commit, want, sink)
        new_of[entry.commit] = new
        prev = new
    assert prev is not None, "the newest checkpoint is never dropped"
    return prev


def replay(repo: ShadowRepo, commits: list[str], onto: str) -> str:
    """Re-commit ``commits`` (oldest first) on top of ``onto``; the new top."""
    for commit in commits:
        onto = _recommit(repo, commit, onto)
        time.sleep(0)
    return onto


def commits_since(repo: ShadowRepo, head: str, base: str, limit: int = 1000) -> list[str] | None:
    """The first-parent commits from ``base`` (excluded) up to ``head``, oldest first; None
    when ``base`` is not among the first ``limit`` ancestors (the chain was rewritten)."""
    out: list[str] = []
    cur: str | None = head
    while cur is not None and cur != base and len(out) < limit:
        out.append(cur)
        _kind, body = read_object(repo, cur)
        parents = [ln[7:].decode() for ln in body.partition(b"\n\n")[0].split(b"\n")
                   if ln.startswith(b"parent ")]
        cur = parents[0] if parents else None
    return list(reversed(out)) if cur == base else None


def prune_chain(repo: ShadowRepo, entries: list[Entry], max_count: int | None,
                max_age_days: float | None, keep_ids: set[str], *, force: bool = False,
                gc: bool = True) -> list[str]:
    """Rewrite the chain without the dropped checkpoints; returns their ids."""
    drops = choose_drops(entries, max_count, max_age_days, keep_ids, force=force)
    if not drops:
        return []
    prev = rewrite_chain(repo, entries, drops)
    old_head = entries[0].commit
    if prev != old_head:
        repo.set_head(prev, old_head)
    if gc:  # loose leftovers go at once; packs (the baseline's) are rewritten without them
        repo.git(["prune", "--expire=now"])
        if any((repo.git_dir / "objects" / "pack").glob("*.pack")):
            repo.git(["repack", "-a", "-d", "-q"])
    return dropped_ids(entries, drops)


def dropped_ids(entries: list[Entry], drops: set[str]) -> list[str]:
    """The checkpoint ids of the dropped commits."""
    return [e.checkpoint.id for e in entries if e.commit in drops and e.checkpoint is not None]
