"""Agent blame of a file: runs of lines with the turn, branch, tool call and approval that last
changed them, cached per (head, path, content) so an unchanged file costs one dictionary hit."""

from __future__ import annotations

import hashlib
import posixpath
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.blame.lines import Kind, LineBlame, Metas, Owner
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.session_store import SessionStore

_CACHE_MAX = 256
_EDIT_TOOLS = ("write_file", "edit_file", "multi_edit")


@dataclass(frozen=True, slots=True)
class EditCall:
    """The tool call of a turn that wrote the lines."""

    id: str
    name: str
    title: str | None = None


@dataclass(frozen=True, slots=True)
class BlameInfo:
    """Who last changed a run of lines: its checkpoint, and for the agent's lines the session,
    turn, branch, tool call and approval (each None when not known)."""

    checkpoint_id: str | None = None
    created_at: str | None = None
    checkpoint_kind: str | None = None
    session_id: str | None = None
    turn_id: str | None = None  # the assistant node of the turn
    turn: int | None = None  # 1-based number of the turn on its branch
    prompt: str | None = None  # the first line of the turn's user message
    branch_head_id: str | None = None
    branch: str | None = None
    tool_call: EditCall | None = None
    approval: dict[str, Any] | None = None  # the call's stored approval record, as stored


@dataclass(slots=True)
class Hunk:
    """Consecutive lines (0-based ``start``, ``count``) last changed by the same checkpoint."""

    start: int
    count: int
    kind: Kind
    commit: str | None = None
    orig_start: int = 0  # the first line's number in the file as that checkpoint has it
    info: BlameInfo = field(default_factory=BlameInfo)  # who changed them


def _runs(owners: list[Owner]) -> list[Hunk]:
    out: list[Hunk] = []
    for n, owner in enumerate(owners):
        last = out[-1] if out else None
        same = last is not None and last.kind == owner.kind and (
            owner.kind == "unrecorded" or (last.commit == owner.commit
                                           and owner.line == last.orig_start + last.count))
        if same and last is not None:
            last.count += 1
        else:
            out.append(Hunk(n, 1, owner.kind, owner.commit, owner.line))
    return out


class AgentBlame:
    """Blame of the files of one workspace, attributed through the session stores."""

    def __init__(self, sessions: SessionStore, store: CheckpointStore) -> None:
        self.sessions = sessions
        self.store = store
        self.lines = LineBlame(store)
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str | None, str, str], list[Hunk] | None] = OrderedDict()

    def blame(self, path: str, text: bytes) -> list[Hunk] | None:
        """Runs of lines of ``text`` (the file ``path`` now) with who changed them; None when
        the agent never changed the file (nothing to show)."""
        rel = self.store._checked_relative(path)
        key = (self.store.head(), rel, hashlib.sha1(text).hexdigest())
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        owners = self.lines.current(rel, text)
        hunks = None
        if owners is not None and any(o.kind == "agent" for o in owners):
            hunks = _runs(owners)
            seen: dict[str | None, BlameInfo] = {}
            tips: dict[str, list[tuple[str, set[str]]]] = {}
            metas = self.lines.metas()
            for hunk in hunks:
                if hunk.commit not in seen:
                    seen[hunk.commit] = self._describe(hunk, rel, metas, tips)
                hunk.info = seen[hunk.commit]
        with self._lock:
            self._cache[key] = hunks
            while len(self._cache) > _CACHE_MAX:
                self._cache.popitem(last=False)
        return hunks

    def _describe(self, hunk: Hunk, path: str, metas: Metas,
                  tips: dict[str, list[tuple[str, set[str]]]]) -> BlameInfo:
        if hunk.commit is None:
            return BlameInfo()
        meta = metas.get(hunk.commit, (None, None))[0]
        if meta is None:
            return BlameInfo()
        info = BlameInfo(checkpoint_id=meta.id, created_at=meta.created_at,
                         checkpoint_kind=meta.kind, session_id=meta.session_id or None)
        if hunk.kind != "agent" or not meta.session_id or not meta.turn_id:
            return info
        return self._turn(replace(info, turn_id=meta.turn_id), meta.session_id, meta.turn_id,
                          path, tips)

    def _turn(self, info: BlameInfo, sid: str, turn_id: str, path: str,
              tips: dict[str, list[tuple[str, set[str]]]]) -> BlameInfo:
        """``info`` with the turn number, branch, tool call and approval of an assistant node."""
        try:
            node = self.sessions.get_node(sid, turn_id)
            chain = self.sessions.get_branch(sid, turn_id)
        except (NotFound, ValueError):
            return info
        user = next((n for n in reversed(chain) if n.role == "user"), None)
        prompt = (user.text.strip().splitlines() or [""])[0][:120] if user is not None else None
        head, branch = self._branch(sid, turn_id, tips)
        call = _edit_call(node, path)
        return replace(info, turn=sum(1 for n in chain if n.role == "user"), prompt=prompt,
                       branch_head_id=head, branch=branch,
                       tool_call=(EditCall(call.id, call.name, call.title)
                                  if call is not None else None),
                       approval=(dict(call.approval)
                                 if call is not None and call.approval else None))

    def _branch(self, sid: str, node_id: str,
                tips: dict[str, list[tuple[str, set[str]]]]
                ) -> tuple[str | None, str | None]:
        """(head id, name) of the branch holding a node: the active one if it does, else a
        named one, else the oldest (``tips`` caches each session's tips and chains for one
        blame)."""
        idx = self.sessions.index(sid)
        names = idx.meta.get("branches") or {}
        active = idx.meta.get("headId")
        if sid not in tips:
            tips[sid] = [(tip, {n.id for n in idx.chain(tip)}) for tip in idx.tips()]
        holding = [tip for tip, chain in tips[sid] if node_id in chain]
        if not holding:
            return None, None
        named = [t for t in holding if (names.get(t) or {}).get("name")]
        tip = active if active in holding else (named[0] if named else holding[0])
        return tip, (names.get(tip) or {}).get("name") or None


def _edit_call(node: Node, path: str) -> Any:
    """The last tool call of a turn that wrote ``path`` (else its last command)."""
    calls = [c for c in node.tool_calls or [] if c.status == "completed"]
    for call in reversed(calls):
        if call.name in _EDIT_TOOLS and posixpath.normpath(str(call.input.get("path", ""))) \
                == path:
            return call
    for call in reversed(calls):
        if call.kind not in ("read", "search", "think", "fetch"):
            return call
    return None
