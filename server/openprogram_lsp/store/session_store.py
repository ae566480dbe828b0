"""Session stores: one git repository per session, an in-memory index, an LRU of open sessions.

Layout of ``sessions/<sid>/``: ``nodes/GGG/LLLLL/<seq>-<id>.json`` (one file per node, written
atomically, sharded so no directory grows with the session), the turn's ContextCommit beside
its assistant node (``<seq>-<id>.context.json``), ``meta.json`` (title, head, branch names,
status: written at creation, then in place in ``.git/openprogram-meta``, ``meta_slots``).
Git is the source of truth: ``commit_turn`` makes exactly one commit per turn, in process
(``session_repo``). Sessions written before sharding keep their flat ``nodes/`` and
``context/`` files; they are read as they are (``docs/decisions/session-migration.md``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import shutil
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic_core import PydanticSerializationError

from openprogram_lsp.core.chain import Mark, NodeChain
from openprogram_lsp.core.errors import InvalidParams, NotFound, SessionBusy
from openprogram_lsp.core.fsutil import protect_dir
from openprogram_lsp.core.ids import is_safe_id, new_session_id, now_iso
from openprogram_lsp.core.images import ImageBlobs
from openprogram_lsp.core.ranges import decode_ranges, encode_ranges
from openprogram_lsp.core.types import Node
from openprogram_lsp.store import (
    context_deltas,
    image_refs,
    node_log,
    node_records,
    page_snapshot,
)
from openprogram_lsp.store.branch_row import BranchRow
from openprogram_lsp.store.cold_page import ColdView, HistoryPage
from openprogram_lsp.store.index import (
    CONTEXT_SUFFIX,
    PENDING,
    SessionIndex,
    node_path,
    top_seq,
)
from openprogram_lsp.store.node_log import NODE_LOG
from openprogram_lsp.store.owned_lock import LockHeld, OwnedLock
from openprogram_lsp.store.owner import (
    current_record,
    describe_record,
    record_alive,
    record_is_self,
)
from openprogram_lsp.store.reply_calls import has_open_calls, settle
from openprogram_lsp.store.session_listing import SessionListing
from openprogram_lsp.store.session_repo import JOURNAL, SessionRepo
from openprogram_lsp.store.spare_session import SpareSession, make_skeleton

log = logging.getLogger(__name__)
APPEND_LOCK_WAIT = 1.0
"""Seconds an append outside a turn waits for a session another process is using."""
COMMIT_LOCK = "openprogram-commit.lock"
COMMIT_LOCK_WAIT = 60.0
"""Seconds a commit waits for another process's commit of the same session."""
COLD_VIEWS = 16
"""Sessions not open in this process whose log tails are kept for history pages."""


@dataclass(slots=True)
class _Open:
    root: Path
    index: SessionIndex
    fingerprint: tuple[int, ...]
    lock: threading.RLock
    repo: SessionRepo
    # owners of turns another live process is running here: checked again on every access,
    # so their death is noticed even when they die without writing anything
    foreign: list[object] = field(default_factory=list)
    recovering: bool = False
    commit_lock: OwnedLock | None = None  # its ``.git/openprogram-commit.lock``, once looked up
    lists: context_deltas.Lists | None = None  # the last ContextCommit's lists written here
    pinned: bool = False  # held by this process (``hold_session``): its stamp is not re-read


def _running(idx: SessionIndex) -> tuple[list[Node], list[object]]:
    """(nodes left running by a dead owner, owners of turns still running elsewhere)."""
    stale: list[Node] = []
    foreign: list[object] = []
    for nid in sorted(idx.running, key=idx.seq.__getitem__):
        node = idx.nodes[nid]
        if node.status != "running":
            continue  # its line said running; its file says it finished
        owner = node.metadata.get("owner")
        if record_is_self(owner):
            continue  # this process's own turns: the dispatcher knows which are live
        if record_alive(owner):
            foreign.append(owner)
        else:
            stale.append(node)
    for owner in (idx.meta.get("running") or {}).values():
        if not record_is_self(owner) and record_alive(owner):
            foreign.append(owner)
    return stale, foreign


_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_no_surrogates(v) for v in value]
    return value


def storable(node: Node) -> tuple[Node, str]:
    """A node and its JSON; lone surrogates (undecodable bytes from a model, a file name or a
    client) become U+FFFD, so no input can make a node, and so its turn, unsaveable."""
    try:
        return node, node.model_dump_json(exclude_none=True)
    except PydanticSerializationError:
        clean = Node.model_validate(_no_surrogates(node.model_dump()))
        return clean, clean.model_dump_json(exclude_none=True)


_ID_LISTS = ("kept", "snipped", "summarised")


_PINNED: dict[Path, tuple[SessionStore, _Open]] = {}
"""Pinned sessions of every store of this process, by directory: a write through another
store unpins one (the pinning store then re-checks its stamp as usual)."""


def _dead_entries(meta: dict[str, Any]) -> bool:
    return any(not record_alive(o) for o in (meta.get("running") or {}).values())


class SessionStore:
    """All sessions under ``<home>/sessions``."""

    def __init__(self, home: Path, *, capacity: int | None = None) -> None:
        self.home = home
        self.root = self.home / "sessions"
        self.root.mkdir(parents=True, exist_ok=True)
        protect_dir(self.home)
        protect_dir(self.root)
        self.capacity = max(1, capacity or 128)  # ``session_cache_cap`` in the settings
        self.images = ImageBlobs(self.home / "images")  # one file per picture, every session
        self._open: OrderedDict[str, _Open] = OrderedDict()
        self._lock = threading.Lock()
        # write locks outlive cache entries: an evicted session reopened while its old entry
        # is still in use must share the lock, or two writers could take the same seq
        self._write_locks: dict[str, threading.RLock] = {}
        self._listing = SessionListing(self.root)
        self.spare = SpareSession(self.root)  # a new session's directory made ahead
        self._listing_lock = threading.Lock()
        self._sorted: tuple[int, list[dict[str, Any]]] = (-1, [])  # (listing version, rows)
        self._real: dict[str, str] = {}
        self._cold: OrderedDict[str, ColdView] = OrderedDict()
        self._cold_lock = threading.Lock()
        self._fp_paths: dict[Path, tuple[str, str, str]] = {}
        self._dirs: dict[str, Path] = {}  # valid session ids and their directories
        self._turn_locks: dict[str, OwnedLock] = {}
        # sessions whose cross-process lock this process holds, pinned (``hold_session``)
        self._held: dict[str, _Open] = {}

    # -- sessions -----------------------------------------------------------------------------

    def session_dir(self, sid: str) -> Path:
        """The directory of a session (validated id)."""
        known = self._dirs.get(sid)
        if known is not None:
            return known
        if not is_safe_id(sid):
            raise InvalidParams(f"sessionId: {sid!r} is not a valid session id")
        if len(self._dirs) >= 4096:
            self._dirs.clear()
        path = self._dirs[sid] = self.root / sid
        return path

    def turn_lock(self, sid: str) -> OwnedLock:
        """The cross-process lock a session's turns hold (``<home>/locks/session-<sid>.lock``)."""
        lock = self._turn_locks.get(sid)
        if lock is None:
            self.session_dir(sid)
            if len(self._turn_locks) >= 4096:
                self._turn_locks.clear()
            lock = self._turn_locks[sid] = OwnedLock.for_path(
                self.home / "locks" / f"session-{sid}.lock")
        return lock

    def exists(self, sid: str) -> bool:
        """Whether a session exists."""
        return is_safe_id(sid) and os.path.exists(f"{self.session_dir(sid)}/meta.json")

    def create_session(self, *, sid: str | None = None, workspace: str | None = None,
                       title: str = "", **meta: Any) -> str:
        """Create a session repository and return its id."""
        sid = sid or new_session_id()
        root = self.session_dir(sid)
        if (root / "meta.json").exists():
            raise InvalidParams(f"sessionId: session {sid!r} already exists")
        if not self.spare.take(root):  # the directory made ahead, or made now
            make_skeleton(root)
        now = now_iso()
        data = {"id": sid, "title": title, "headId": None, "branches": {}, "status": "idle",
                "createdAt": now, "updatedAt": now, "workspace": workspace, **meta}
        SessionRepo(root).write("meta.json", json.dumps(data, separators=(",", ":")))
        with self._listing_lock:
            self._listing.record(data)
        return sid

    def list_sessions(self, *, workspace: str | None = None, offset: int = 0,
                      limit: int | None = None) -> list[dict[str, Any]]:
        """Sessions' meta, most recently updated first; optionally only one workspace's (its
        real path) and one page, served from the listing (``session_listing``)."""
        return self.session_page(workspace=workspace, offset=offset, limit=limit)[0]

    def session_page(self, *, workspace: str | None = None, offset: int = 0,
                     limit: int | None = None) -> tuple[list[dict[str, Any]], int]:
        """(one page of ``list_sessions``, how many sessions match in all)."""
        want = os.path.realpath(workspace) if workspace else None
        rows = self._metas()
        if want is not None:
            rows = [m for m in rows if self._workspace_of(m) == want]
        page = rows[offset:] if limit is None else rows[offset:offset + limit]
        out = []
        for meta in page:
            if _dead_entries(meta) and is_safe_id(str(meta.get("id"))):
                with suppress(OSError, ValueError, NotFound):
                    meta = self.meta(str(meta["id"]))  # opening it recovers the dead turns
            meta = dict(meta)
            meta["status"] = "running" if meta.get("running") else "idle"
            out.append(meta)
        return out, len(rows)

    def checkpoint_refs(self, workspace: Path) -> set[str]:
        """Checkpoint ids the nodes of a workspace's sessions record (what pruning keeps).

        Read from each session's small ``openprogram-checkpoints`` file, kept up to date as
        nodes are written; a session from before that file is scanned once to create it.
        """
        want = os.path.realpath(workspace)
        out: set[str] = set()
        for meta in self._metas():
            where = self._workspace_of(meta)
            sid = str(meta.get("id"))
            if (where is not None and where != want) or not is_safe_id(sid):
                continue
            try:
                out |= node_records.checkpoint_ids(self.root / sid, partial(self.nodes, sid))
            except (NotFound, OSError, ValueError):
                continue
        return out

    def rules_forks(self, sid: str) -> frozenset[str] | None:
        """Ids of the session's user nodes that may start a rules scope (a superset: check
        their bodies), or None when the session keeps no such record or it is unreadable."""
        try:
            return node_records.rules_forks(self.session_dir(sid))
        except InvalidParams:
            return None

    def _workspace_of(self, meta: dict[str, Any]) -> str | None:
        ws = meta.get("workspace")
        if not isinstance(ws, str) or not ws:
            return None
        cached = self._real.get(ws)
        if cached is None:
            cached = self._real[ws] = os.path.realpath(ws)
        return cached

    def _metas(self) -> list[dict[str, Any]]:
        """Every session's listed meta, most recently updated first (re-sorted only when the
        listing changed)."""
        with self._listing_lock:
            rows = self._listing.current()
            version = self._listing.version
            if self._sorted[0] != version:
                ordered = sorted(rows.values(), reverse=True, key=lambda m: (
                    str(m.get("updatedAt") or ""), str(m.get("createdAt") or ""), m["id"]))
                self._sorted = (version, ordered)
            return self._sorted[1]

    def _write_meta(self, repo: SessionRepo, meta: dict[str, Any]) -> None:
        """Write a session's meta (in place: ``meta_slots``), then its line in the listing."""
        repo.write_meta(json.dumps(meta, separators=(",", ":")).encode())
        with self._listing_lock:
            self._listing.record(meta)

    def delete_session(self, sid: str) -> None:
        """Delete a session and its repository; SessionBusy while any process runs a turn."""
        root = self.session_dir(sid)
        if not (root / "meta.json").exists():
            raise NotFound(f"unknown session id {sid!r}")
        with self.hold_session(sid, "delete"):
            with self._lock:
                self._open.pop(sid, None)
                self._cold.pop(sid, None)
            # move aside first so a reader never sees half a session, then remove
            trash = self.root / f".deleted-{sid}-{os.getpid()}"
            node_log.forget(root / ".git" / NODE_LOG)  # no descriptor kept into the trash
            os.replace(root, trash)
            with self._listing_lock:
                self._listing.forget(sid)
            shutil.rmtree(trash, ignore_errors=True)
        # the images no session names any more (a crash before this: the next delete's)
        image_refs.collect(self.root, self.images)

    # -- open / index -------------------------------------------------------------------------

    def _fingerprint(self, root: Path) -> tuple[int, ...]:
        """Changes with every write of any process: the journal's stamp (every write appends
        to it and every commit marks or empties it). A session without a journal (written
        before it) is stamped by its meta file and its flat ``nodes/`` directory."""
        paths = self._fp_paths.get(root)
        if paths is None:
            if len(self._fp_paths) >= 4096:
                self._fp_paths.clear()
            base = str(root)
            paths = self._fp_paths[root] = (f"{base}/nodes", f"{base}/.git/{JOURNAL}",
                                            f"{base}/meta.json")
        try:
            journal = os.stat(paths[1])
            return journal.st_ino, journal.st_mtime_ns, journal.st_size
        except FileNotFoundError:
            pass
        try:
            nodes = os.stat(paths[0]).st_mtime_ns
        except FileNotFoundError:
            nodes = 0
        try:
            st = os.stat(paths[2])
            return nodes, 0, 0, st.st_mtime_ns, st.st_size
        except FileNotFoundError:
            raise NotFound(f"unknown session id {root.name!r}") from None

    def _get(self, sid: str) -> _Open:
        held = self._held.get(sid)
        if held is not None and held.pinned:  # no other process writes it: nothing to check
            return held
        root = self.session_dir(sid)
        with self._lock:
            entry = self._open.get(sid)
            if entry is not None:
                self._open.move_to_end(sid)
        fp = self._fingerprint(root)
        if entry is not None and entry.fingerprint == fp:
            if entry.foreign and not entry.recovering and not all(
                    record_alive(o) for o in entry.foreign):
                self._recover(sid, entry)
            return entry
        with self._lock:
            entry = self._open.get(sid)
            if entry is None:
                lock = self._write_locks.setdefault(sid, threading.RLock())
                entry = _Open(root, SessionIndex(), (-1,), lock, SessionRepo(root))
                self._open[sid] = entry
                self._cold.pop(sid, None)
                while len(self._open) > self.capacity:
                    self._open.popitem(last=False)
        with entry.lock:
            if entry.fingerprint != fp:  # first open, or another process wrote
                self._reload(entry)
                if not entry.recovering:
                    self._recover(sid, entry)
        return entry

    def _reload(self, entry: _Open) -> None:
        """Bring the index up to what is on disk: the lines other processes added to the node
        log (the whole log when it was replaced, or on first open)."""
        fp = self._fingerprint(entry.root)
        if not entry.index.refresh():
            entry.index = SessionIndex.load(entry.root)
        entry.fingerprint = fp

    def _recover(self, sid: str, entry: _Open) -> None:
        """Mark turns left ``running`` by a dead process as interrupted, and commit that.

        Runs whenever a session is opened (any method, any process), so history never shows a
        dead turn as running. It needs the session's lock: when another live process holds it,
        that process recovered the session when it opened it.
        """
        stale, entry.foreign = _running(entry.index)
        if not stale and not _dead_entries(entry.index.meta):
            return
        session_lock = self.turn_lock(sid)
        with entry.lock:
            try:
                session_lock.acquire("recover")
            except LockHeld:
                return
            try:
                with self._commit_lock(entry).hold("commit", timeout=COMMIT_LOCK_WAIT):
                    self._recover_locked(sid, entry)
            finally:
                session_lock.release()

    def _recover_locked(self, sid: str, entry: _Open) -> None:
        entry.recovering = True
        try:
            self._reload(entry)  # what is on disk now
            stale, entry.foreign = _running(entry.index)
            meta = entry.index.meta
            running = {k: v for k, v in (meta.get("running") or {}).items() if record_alive(v)}
            if not stale and running == (meta.get("running") or {}):
                return
            for node in stale:
                self.update_node(sid, node.id, status="interrupted",
                                 text=(node.text + "\n\n[interrupted]").strip(),
                                 tool_calls=self.settled(sid, node).tool_calls)
                log.info("session %s: turn %s of %s was interrupted", sid, node.id,
                         describe_record(node.metadata.get("owner")))
            self._write_running(entry, running)
            self._commit_locked(entry, f"recover: {len(stale)} interrupted turn(s)")
        finally:
            entry.recovering = False

    def index(self, sid: str) -> SessionIndex:
        """The live index of a session (rebuilt if another process changed it)."""
        return self._get(sid).index

    def rebuild_index(self, sid: str) -> SessionIndex:
        """A fresh index rebuilt from the node files alone, independent of the cached one and
        of the node log."""
        return SessionIndex.scan(self.session_dir(sid))

    @contextmanager
    def locked(self, sid: str) -> Iterator[_Open]:
        """Hold the session's write locks: its cross-process lock (every write is made by the
        process holding it, ``hold_session``; waits ``APPEND_LOCK_WAIT`` for another
        process's), then this process's write lock."""
        with self.hold_session(sid, "write", timeout=APPEND_LOCK_WAIT):
            entry = self._get(sid)
            pin = _PINNED.get(entry.root)
            if pin is not None and pin[0] is not self:  # another store of this process
                pin[1].pinned = False  # pinned it: that one re-checks from now on
            with entry.lock:
                yield entry

    def _refresh_fp(self, entry: _Open) -> None:
        if not entry.pinned:  # a pinned entry's stamp is taken once, when it is let go
            entry.fingerprint = self._fingerprint(entry.root)

    # -- meta ---------------------------------------------------------------------------------

    def meta(self, sid: str) -> dict[str, Any]:
        """A copy of the session's meta."""
        return dict(self._get(sid).index.meta)

    def update_meta(self, sid: str, **changes: Any) -> dict[str, Any]:
        """Merge changes into the meta file (atomically)."""
        with self.locked(sid) as entry:
            meta = dict(entry.index.meta)
            meta.update(changes)
            meta["updatedAt"] = now_iso()
            self._write_meta(entry.repo, meta)
            entry.index.meta = meta
            self._refresh_fp(entry)
            return dict(meta)

    def head(self, sid: str) -> str | None:
        """The session's active head node id."""
        head = self._get(sid).index.meta.get("headId")
        return head if isinstance(head, str) else None

    def set_head(self, sid: str, head_id: str) -> None:
        """Move the session's head to a chain node."""
        node = self.get_node(sid, head_id)
        if node.role == "summary" or node.caller is not None:
            raise InvalidParams(f"headId: {head_id!r} is not a conversation message")
        self.update_meta(sid, headId=head_id)

    def begin_turn(self, sid: str, turn_id: str) -> None:
        """Record that this process runs a turn in the session (status ``running``)."""
        with self.locked(sid) as entry:
            running = dict(entry.index.meta.get("running") or {})
            running[turn_id] = current_record("turn")
            self._write_running(entry, running)

    def end_turn(self, sid: str, turn_id: str, **changes: Any) -> None:
        """Drop a finished turn from the running ones and merge ``changes`` into the meta."""
        with self.locked(sid) as entry:
            running = dict(entry.index.meta.get("running") or {})
            running.pop(turn_id, None)
            self._write_running(entry, running, **changes)

    def _write_running(self, entry: _Open, running: dict[str, Any], **changes: Any) -> None:
        meta = {**entry.index.meta, **changes}
        if running:
            meta["running"] = running
        else:
            meta.pop("running", None)
        pending = meta.get(PENDING)
        if isinstance(pending, dict):
            # a reply leaves the meta with its turn, never before its file exists
            kept = {k: v for k, v in pending.items() if k in running}
            for nid in pending.keys() - kept.keys():
                self._write_pending(entry, nid)
            if kept:
                meta[PENDING] = kept
            else:
                meta.pop(PENDING, None)
        meta["status"] = "running" if running else "idle"
        meta["updatedAt"] = now_iso()
        self._write_meta(entry.repo, meta)
        entry.index.meta = meta
        self._refresh_fp(entry)

    # -- nodes --------------------------------------------------------------------------------

    def get_node(self, sid: str, node_id: str) -> Node:
        """Return one node or raise NotFound."""
        return self._get(sid).index.get(node_id)

    def has_node(self, sid: str, node_id: str) -> bool:
        """Whether a session holds a node."""
        return node_id in self._get(sid).index.nodes

    def append(self, sid: str, node: Node, *, advance_head: bool = False) -> Node:
        """Write a new node (idempotent on id) and optionally move the head to it.

        The sequence number is allocated under the session's cross-process lock (already held
        when a turn of this process runs), after re-reading what another process wrote.
        """
        with self.hold_session(sid, "append", timeout=APPEND_LOCK_WAIT):
            return self._append(sid, node, advance_head=advance_head)

    def start_turn(self, sid: str, user: Node, reply: Node, *,
                   advance_head: bool = True) -> tuple[Node, Node]:
        """Write a turn's user node, then one meta: the head on the reply (``advance_head``),
        the turn among the running ones (``begin_turn``) and the running reply itself
        (``PENDING``: its file is written by its first ``update_node``, when a call starts or
        the turn ends, as a new file rather than a rewrite of one).

        A crash before the meta leaves the user node off the branch and no reply: nothing of
        the turn was acknowledged yet (the caller reports the prompt after this returns). A
        crash after it leaves the reply to the meta, recovered as interrupted.
        """
        with self.hold_session(sid, "append", timeout=APPEND_LOCK_WAIT), \
                self.locked(sid) as entry:
            user = self._append(sid, user, advance_head=advance_head, write_meta=False)
            reply = self._append(sid, reply, advance_head=advance_head, write_meta=False,
                                 pending=True)
            running = dict(entry.index.meta.get("running") or {})
            running[reply.id] = current_record("turn")
            self._write_running(entry, running)
            return user, reply

    @contextmanager
    def hold_session(self, sid: str, purpose: str, timeout: float = 0.0) -> Iterator[None]:
        """Hold the session's cross-process lock; SessionBusy when another process has it.

        Every write to a session is made under this lock (``locked``), so while this process
        holds it no other process writes the session. Taking it fresh re-reads the index when
        another process wrote meanwhile (file times alone can miss a write made within the
        same clock tick) and recovers its dead turns; then the session is pinned: read and
        written without re-checking its stamp until that hold ends, when its stamp is taken
        once more, before the lock is given back (holds of this process that join it meanwhile
        share the pin while it lasts).
        """
        lock = self.turn_lock(sid)
        try:
            fresh = lock.acquire(purpose, timeout=timeout)
        except LockHeld as exc:
            who = exc.holder.describe() if exc.holder else "an unknown process"
            raise SessionBusy(f"session is busy in another process ({who}); session {sid}",
                              data={"session_id": sid}) from None
        pinned: _Open | None = None
        try:
            if fresh:
                entry = self._resync(sid)
                entry.pinned = True
                self._held[sid] = entry
                _PINNED[entry.root] = (self, entry)
                pinned = entry
            yield
        finally:
            if pinned is not None:
                self._unpin(sid, pinned)
            lock.release()

    def _unpin(self, sid: str, entry: _Open) -> None:
        """Let a pinned session go (its stamp taken while the lock is still held)."""
        self._held.pop(sid, None)
        if _PINNED.get(entry.root, (None, None))[1] is entry:
            del _PINNED[entry.root]
        if entry.pinned:
            entry.pinned = False
            with suppress(NotFound, OSError):  # (deleted under the hold)
                self._refresh_fp(entry)

    def _resync(self, sid: str) -> _Open:
        entry = self._get(sid)  # reloaded when the journal's stamp moved
        if len(entry.fingerprint) == 3:
            # stamped by its journal (inode, mtime, size): every write of any process appends
            # to it, so a write made within the same clock tick still changes the size
            return entry
        with entry.lock:  # a session from before the journal: its newest shard tells
            if top_seq(entry.root / "nodes") >= entry.index.next_seq:
                self._reload(entry)
        return entry

    def _write_pending(self, entry: _Open, nid: str) -> None:
        """Write the file of a reply the meta still carries (a turn that ended, or died,
        before its reply was written), so it can leave the meta."""
        idx = entry.index
        if nid not in idx.seq or idx.role_of(nid) != "assistant":
            return
        name = idx.files[nid]
        if os.path.lexists(f"{entry.root}/nodes/{name}"):
            return
        node, payload = storable(idx.get(nid))
        entry.repo.write(f"nodes/{name}", payload)
        idx.add(node, name, idx.seq[nid])
        idx.log_node(nid)

    def _append(self, sid: str, node: Node, *, advance_head: bool,
                write_meta: bool = True, pending: bool = False) -> Node:
        with self.locked(sid) as entry:
            idx = entry.index
            if node.id in idx.nodes:
                return idx.nodes[node.id]
            if not node.id or node.id.startswith(".") or any(c in node.id for c in "/\\\0"):
                raise InvalidParams(f"id: {node.id!r} cannot name a node file")
            if node.predecessor is not None and node.predecessor not in idx.nodes:
                raise NotFound(f"predecessor {node.predecessor!r} is not in session {sid!r}")
            if not node.created_at:
                node = node.model_copy(update={"created_at": now_iso()})
            seq = idx.next_seq
            name = node_path(seq, node.id)
            node, payload = storable(node)
            image_refs.note(entry.root, payload)  # before the node names them on disk
            if pending:  # its structure and body go into the meta the caller writes next
                idx.add(node, name, seq)
                pend = dict(idx.meta.get(PENDING) or {})
                pend[node.id] = {"seq": seq, "node": json.loads(payload)}
                idx.meta = {**idx.meta, PENDING: pend}
            else:
                node_records.note_rules_fork(entry.root, node)
                entry.repo.write(f"nodes/{name}", payload)
                idx.add(node, name, seq)
                idx.log_node(node.id)
            if idx.log_is_long():
                idx.rewrite_log()  # under the session's lock: no other process appends
            node_records.note_checkpoint(entry.root, node)
            branches = idx.meta.get("branches") or {}
            moved = node.predecessor in branches and idx.is_chain_node(node)
            if moved or advance_head:
                meta = dict(idx.meta)
                if moved:
                    # A named tip that grows keeps its name on the new tip.
                    branches = dict(branches)
                    branches[node.id] = branches.pop(node.predecessor)
                    meta["branches"] = branches
                if advance_head:
                    meta["headId"] = node.id
                meta["updatedAt"] = now_iso()
                if write_meta:  # else the caller writes it next, under the same locks
                    self._write_meta(entry.repo, meta)
                idx.meta = meta
            self._refresh_fp(entry)
            return node

    def update_node(self, sid: str, node_id: str, **changes: Any) -> Node:
        """Rewrite a node's mutable fields (text, status, tool calls, metadata)."""
        forbidden = {"id", "predecessor", "caller", "role"} & changes.keys()
        if forbidden:
            raise ValueError(f"cannot change {sorted(forbidden)} of a node")
        with self.locked(sid) as entry:
            idx = entry.index
            old = idx.get(node_id)
            node, payload = storable(old.model_copy(update=changes))
            if "tool_calls" in changes or "metadata" in changes:
                image_refs.note(entry.root, payload, lambda: storable(old)[1])
            name = idx.files[node_id]
            if node.status == "running" and node_id not in idx.running:
                idx.running.add(node_id)  # said before the file: the log never misses a
                idx.log_node(node_id)     # running node
            if node.metadata.get("rules") != old.metadata.get("rules"):
                node_records.note_rules_fork(entry.root, node)
            entry.repo.write(f"nodes/{name}", payload)
            idx.add(node, name, idx.seq[node_id])
            idx.log_node(node_id)  # after the file: a reader that sees it reads the new body
            if node.metadata.get("checkpointId") != old.metadata.get("checkpointId"):
                node_records.note_checkpoint(entry.root, node)
            self._refresh_fp(entry)
            return node

    def get_branch(self, sid: str, head: str | None = None) -> list[Node]:
        """The chain from the root to ``head`` (default: the session head); root first."""
        idx = self._get(sid).index
        head = head or idx.meta.get("headId")
        if not head:
            return []
        return self._settled_all(sid, idx.chain(head))

    def settled(self, sid: str, node: Node) -> Node:
        """A reply with the calls it still lists as running taken from their tool nodes
        (``reply_calls``): what a reader of a running turn, or its recovery, shows."""
        if not has_open_calls(node):
            return node
        return settle(node, self.callees(sid, node.id, role="tool"))

    def _settled_all(self, sid: str, nodes: list[Node]) -> list[Node]:
        # only a reply still running (or dead and not yet recovered: it says running too) can
        # list a call whose end is only in its tool node; the index knows every running node,
        # so a chain with none of them is looked at no further (it was a pass over every node)
        running = self._get(sid).index.running
        if not running or running.isdisjoint([n.id for n in nodes]):
            return nodes
        return [self.settled(sid, n) if n.id in running else n for n in nodes]

    def page(self, sid: str, head: str, *, limit: int, before: str | None = None,
             keep: bool = True) -> tuple[list[Node], bool]:
        """Up to ``limit`` nodes of the chain ending at ``head`` that come just before
        ``before`` (default: the last ones), root first, and whether older ones remain
        (``keep=False``: bodies read for it are not kept in the session's cache)."""
        idx = self._get(sid).index
        ids = idx.chain_ids(head)
        end = len(ids)
        if before is not None:
            at = idx.position(head, before)
            if at is None:
                raise InvalidParams(f"beforeNodeId: {before!r} is not on the branch of {head!r}")
            end = at
        start = max(0, end - limit)
        return idx.nodes.many(ids[start:end], keep=keep), start > 0

    def history_page(self, sid: str, head_id: str | None, *, limit: int,
                     before: str | None = None, reply_role: str = "system") -> HistoryPage:
        """One page of a branch (``page``) with the head it ends at (default: the session's)
        and each page node's callees of ``reply_role``.

        A session this process has not opened is answered from the tail of its node log
        (``cold_page``): the first screen of a long session reads that screen, not the
        session. Anything the tail cannot answer for sure opens the session as usual.
        """
        with self._lock:
            cold = sid not in self._open
        if cold:
            page = self._cold_page(sid, head_id, limit, before, reply_role)
            if page is not None:
                if any(has_open_calls(n) for n in page.nodes):  # a turn running elsewhere
                    page.nodes = self._settled_all(sid, page.nodes)
                return page
        if head_id is not None and not self.has_node(sid, head_id):
            raise NotFound(f"headId: unknown node id {head_id!r} in session {sid!r}")
        head = head_id or self.head(sid)
        if not head:
            if before is not None:
                raise InvalidParams(f"beforeNodeId: {before!r} is not on the branch")
            return HistoryPage(None, [], False)
        # a page holds only what it returns: bodies read for it are not kept by the index
        nodes, more = self.page(sid, head, limit=limit, before=before, keep=False)
        nodes = self._settled_all(sid, nodes)
        return HistoryPage(head, nodes, more,
                           self.callees_of(sid, [n.id for n in nodes], role=reply_role,
                                           keep=False))

    def kept_page(self, sid: str, head_id: str | None, *, limit: int,
                  before: str | None) -> bytes | None:
        """The history answer's JSON kept for this first page (``page_snapshot``), when this
        process has not opened the session and nothing the page was read from changed."""
        if before is not None:
            return None
        with self._lock:
            if sid in self._open:
                return None
        return page_snapshot.read(self.session_dir(sid), sid, head_id=head_id, limit=limit)

    def keep_first_page(self, sid: str, render: page_snapshot.Render, *, limit: int,
                        min_nodes: int | None = None) -> float | None:
        """Write the session's kept first page (``page_snapshot.write``: None when done, else
        seconds to wait before trying again)."""
        return page_snapshot.write(
            self.session_dir(sid), sid, render, limit=limit,
            min_nodes=page_snapshot.MIN_NODES if min_nodes is None else min_nodes)

    def _cold_page(self, sid: str, head_id: str | None, limit: int, before: str | None,
                   reply_role: str) -> HistoryPage | None:
        root = self.session_dir(sid)
        with self._cold_lock:
            with self._lock:
                view = self._cold.get(sid)
            if view is None or not view.fresh():
                view = ColdView.open(root)
                if view is None:
                    return None
            page = view.page(head_id, limit=limit, before=before, reply_role=reply_role)
            with self._lock:
                if sid not in self._open:  # opened meanwhile: the index serves from now on
                    self._cold[sid] = view
                    self._cold.move_to_end(sid)
                    while len(self._cold) > COLD_VIEWS:
                        self._cold.popitem(last=False)
            return page

    def chain_view(self, sid: str, head: str | None = None) -> NodeChain:
        """``get_branch`` as a ``NodeChain``: the ids now, each body when it is looked at (a
        turn reads the few it renders, not the whole session)."""
        idx = self._get(sid).index
        head = head or idx.meta.get("headId")
        mark = Mark(idx.nodes.log, idx.nodes.log.count)  # before any body is read
        ids = idx.chain_ids(head) if head else []
        return NodeChain(ids, lambda want: self._get(sid).index.nodes.many(want), len(ids),
                         mark=mark, positions=idx.chain_positions())

    def chain_ids(self, sid: str, head: str | None = None) -> list[str]:
        """The ids of ``get_branch`` (reads no node body; do not modify the list)."""
        idx = self._get(sid).index
        head = head or idx.meta.get("headId")
        return idx.chain_ids(head) if head else []

    def nodes(self, sid: str) -> list[Node]:
        """Every node of a session in creation order (reads every body)."""
        idx = self._get(sid).index
        return idx.nodes.many(sorted(idx.seq, key=idx.seq.__getitem__))

    def callees(self, sid: str, node_id: str, *, role: str | None = None) -> list[Node]:
        """Nodes whose ``caller`` is the given node (only those of ``role``: the others'
        bodies are not read)."""
        idx = self._get(sid).index
        ids = idx.callees.get(node_id, ())
        if role is not None:
            ids = [c for c in ids if idx.role_of(c) == role]
        return idx.nodes.many(list(ids))

    def callees_of(self, sid: str, ids: list[str], *, role: str,
                   keep: bool = True) -> dict[str, list[Node]]:
        """``callees(..., role=role)`` of many nodes at once (nodes without any left out;
        ``keep=False``: bodies read for it are not kept)."""
        idx = self._get(sid).index
        out: dict[str, list[Node]] = {}
        links = idx.callees
        for nid in ids:
            if nid in links:
                kids = [c for c in links[nid] if idx.role_of(c) == role]
                if kids:
                    out[nid] = idx.nodes.many(kids, keep=keep)
        return out

    # -- branches -----------------------------------------------------------------------------

    def list_branches(self, sid: str) -> list[BranchRow]:
        """Every branch tip: head id, name, whether active, chain length and a preview (reads
        the bodies of the previewed nodes only)."""
        idx = self._get(sid).index
        seqs = idx.seq
        head = idx.meta.get("headId")
        names = idx.meta.get("branches") or {}
        out = []
        roots = sorted((n for n in seqs if idx.predecessor_of(n) is None and idx.is_chain_id(n)),
                       key=seqs.__getitem__)

        def first_child(pid: str) -> str | None:
            kids = [k for k in idx.children.get(pid, ()) if idx.is_chain_id(k)]
            return min(kids, key=seqs.__getitem__) if kids else None

        for tip in idx.tips():
            chain = idx.chain_ids(tip)
            # Where the branch left the older line: the deepest node that is not the first
            # chain child of its predecessor (or a later root). Later forks only add younger
            # children, so this stays put as the conversation grows: a stable identity.
            fork = None
            for nid in reversed(chain):
                pred = idx.predecessor_of(nid)
                first = (roots[0] if roots else nid) if pred is None else first_child(pred)
                if first != nid:
                    fork = idx.nodes[nid]
                    break
            last_user = next((n for n in reversed(chain) if idx.role_of(n) == "user"), chain[-1])
            preview = idx.nodes[last_user].text.strip().splitlines()
            entry = BranchRow(head_id=tip, active=tip == head, length=len(chain),
                              preview=preview[0][:80] if preview else "",
                              name=(names.get(tip) or {}).get("name") or None)
            if fork is not None:
                lines = fork.text.strip().splitlines()
                entry = dataclasses.replace(
                    entry, fork_id=fork.id, forked_from=fork.predecessor,
                    started_at=fork.created_at, start_preview=lines[0][:80] if lines else "")
            out.append(entry)
        return out

    def name_branch(self, sid: str, head_id: str, name: str) -> None:
        """Name the branch whose tip is ``head_id`` (names are unique per session)."""
        self.get_node(sid, head_id)
        with self.locked(sid):
            branches = {k: v for k, v in (self.meta(sid).get("branches") or {}).items()
                        if v.get("name") != name}
            branches[head_id] = {**branches.get(head_id, {}), "name": name}
            self.update_meta(sid, branches=branches)

    def find_branch(self, sid: str, name: str) -> str | None:
        """The tip of the branch with this name, if any."""
        for tip, info in (self.meta(sid).get("branches") or {}).items():
            if info.get("name") == name:
                return str(tip)
        return None

    # -- context commits ----------------------------------------------------------------------

    def _context_paths(self, sid: str, turn_id: str,
                       idx: SessionIndex | None = None) -> tuple[str | None, str]:
        """(path beside the turn's node, path of sessions written before sharding)."""
        legacy = f"context/{turn_id}.json"
        if idx is None:
            idx = self._get(sid).index
        name = idx.files.get(turn_id)
        if name is None or "/" not in name:
            return None, legacy
        return f"nodes/{name[:-len('.json')]}{CONTEXT_SUFFIX}", legacy

    def write_context_commit(self, sid: str, turn_id: str, record: dict[str, Any]) -> None:
        """Write the immutable per-turn ContextCommit (refuses to overwrite).

        Its node id lists (``kept``, ``snipped``, ``summarised``) are stored as ranges of
        positions on the turn's chain, so the record's size does not grow with the session.
        A record that brings them as ranges already (``keptRanges``..., what the context
        engine writes) is stored as it is, without walking the chain. From version 3 its
        ``replaced`` and ``protected`` lists are stored as a change from the previous turn's
        record on the chain where that is smaller (``context_deltas``).
        """
        with self.locked(sid) as entry:
            beside, legacy = self._context_paths(sid, turn_id, entry.index)
            rel = beside or legacy
            base = str(entry.root)
            if any(p and os.path.lexists(f"{base}/{p}") for p in (beside, legacy)):
                raise ValueError(f"context commit for {turn_id!r} already written")
            stored = dict(record)
            lists = [k for k in _ID_LISTS if isinstance(stored.get(k), list)
                     and all(isinstance(i, str) for i in stored[k])]
            if lists and turn_id in entry.index.seq:
                pos = {nid: i for i, nid in enumerate(entry.index.chain_ids(turn_id))}
                for key in lists:
                    stored[key + "Ranges"] = encode_ranges(stored.pop(key), pos)
            written: context_deltas.Lists | None = None
            version = stored.get("version")
            if type(version) is int and version >= 3 and turn_id in entry.index.seq \
                    and all(type(stored.get(k)) is list for k in context_deltas.LISTS):
                written = context_deltas.encode(stored, turn_id,
                                                self._lists_base(sid, entry, turn_id))
            entry.repo.write(rel, json.dumps(stored, separators=(",", ":")))
            entry.lists = written
            self._refresh_fp(entry)

    def _lists_base(self, sid: str, entry: _Open, turn_id: str) -> context_deltas.Lists | None:
        """The lists of the record of the nearest turn before ``turn_id`` on its chain (the
        one written last here, else read back), or None when it has none to trust."""
        idx = entry.index
        try:
            prev: str | None = idx.predecessor_of(turn_id)
            for _ in range(16):  # a turn's user node, a few more where a turn wrote no reply
                if prev is None or idx.role_of(prev) == "assistant":
                    break
                prev = idx.predecessor_of(prev)
            else:
                return None
        except KeyError:  # a broken chain: nothing to build on
            return None
        if prev is None:
            return None
        memo = entry.lists
        if memo is not None and memo.turn_id == prev:
            beside, legacy = self._context_paths(sid, prev, idx)
            if os.path.lexists(f"{entry.root}/{beside or legacy}"):
                return memo
        data = self._stored_context(sid, prev, idx)
        return None if data is None else context_deltas.resolve(
            data, lambda tid: self._stored_context(sid, tid, idx), prev)

    def _stored_context(self, sid: str, turn_id: str,
                        idx: SessionIndex) -> dict[str, Any] | None:
        """A turn's ContextCommit as stored, or None (none, or not a JSON object)."""
        if turn_id not in idx.seq:  # never a path made of a name read from a record
            return None
        root = self.session_dir(sid)
        for rel in self._context_paths(sid, turn_id, idx):
            if rel is None:
                continue
            try:
                data = json.loads((root / rel).read_bytes())
            except FileNotFoundError:
                continue
            except (OSError, ValueError):
                return None
            return data if isinstance(data, dict) else None
        return None

    def read_context_commit(self, sid: str, turn_id: str) -> dict[str, Any] | None:
        """The ContextCommit of a turn, or None. A record stored as a delta comes back with
        its lists in full; one whose base cannot be read back, with ``replaced`` and
        ``protected`` None and ``listsUnresolved`` (never other lists)."""
        root = self.session_dir(sid)
        idx = self._get(sid).index
        for rel in self._context_paths(sid, turn_id, idx):
            if rel is None:
                continue
            try:
                data: dict[str, Any] = json.loads((root / rel).read_bytes())
            except FileNotFoundError:
                continue
            if "listsBase" in data:
                context_deltas.resolve(data, lambda tid: self._stored_context(sid, tid, idx),
                                       turn_id)
            if any(key + "Ranges" in data for key in _ID_LISTS):
                chain = self.chain_ids(sid, turn_id)
                for key in _ID_LISTS:
                    if key + "Ranges" in data:
                        data[key] = decode_ranges(data.pop(key + "Ranges"), chain)
            return data
        return None

    # -- git ----------------------------------------------------------------------------------

    def commit_turn(self, sid: str, message: str) -> str | None:
        """Commit the session's working tree as one turn; returns the commit id or None.

        Other processes commit under the same file lock, so a git lock file found meanwhile was
        left by a killed git and is removed (``owned``).
        """
        with self.locked(sid) as entry, self._commit_lock(entry).hold(
                "commit", timeout=COMMIT_LOCK_WAIT):
            return self._commit_locked(entry, message)

    def _commit_lock(self, entry: _Open) -> OwnedLock:
        lock = entry.commit_lock
        if lock is None:
            lock = entry.commit_lock = OwnedLock.for_path(entry.root / ".git" / COMMIT_LOCK)
        return lock

    def _commit_locked(self, entry: _Open, message: str) -> str | None:
        # lone surrogates cannot stop a commit
        text = message.encode("utf-8", "replace").decode("utf-8")
        sha = entry.repo.commit(text)
        self._refresh_fp(entry)
        return sha

    def git_log(self, sid: str, limit: int = 50) -> list[str]:
        """Subjects of the session's git commits, newest first."""
        return SessionRepo(self.session_dir(sid)).log(limit)
