"""Agent blame of a file: runs of lines with the turn, branch, tool call and approval that last
changed them, cached per (head, path, content) so an unchanged file costs one dictionary hit."""

from __future__ import annotations

import hashlib
import posixpath
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.blame.lines import Kind, LineBlame, Metas, Owner
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.session_store import SessionStore

_CACHE_MAX = 256
_EDIT_TOOLS = ("write_file", "edit_file")


@dataclass(slots=True)
class Hunk:
    """Consecutive lines (0-based ``start``, ``count``) last changed by the same checkpoint."""

    start: int
    count: int
    kind: Kind
    commit: str | None = None
    orig_start: int = 0  # the first line's number in the file as that checkpoint has it
    # who changed them (snake_case keys): checkpoint_id, created_at, checkpoint_kind,
    # session_id, turn_id, turn, prompt, branch_head_id, branch, tool_call, approval
    info: dict[str, Any] = field(default_factory=dict)


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
        key = (self.store.repo.head(), rel, hashlib.sha1(text).hexdigest())
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        owners = self.lines.current(rel, text)
        hunks = None
        if owners is not None and any(o.kind == "agent" for o in owners):
            hunks = _runs(owners)
            seen: dict[str | None, dict[str, Any]] = {}
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
                  tips: dict[str, list[tuple[str, set[str]]]]) -> dict[str, Any]:
        if hunk.commit is None:
            return {}
        meta = metas.get(hunk.commit, (None, None))[0]
        if meta is None:
            return {}
        info: dict[str, Any] = {"checkpoint_id": meta.id, "created_at": meta.created_at,
                                "checkpoint_kind": meta.kind}
        if meta.session_id:
            info["session_id"] = meta.session_id
        if hunk.kind != "agent" or not meta.session_id or not meta.turn_id:
            return info
        info["turn_id"] = meta.turn_id
        info.update(self._turn(meta.session_id, meta.turn_id, path, tips))
        return info

    def _turn(self, sid: str, turn_id: str, path: str,
              tips: dict[str, list[tuple[str, set[str]]]]) -> dict[str, Any]:
        """Turn number, branch, tool call and approval of an assistant node."""
        try:
            node = self.sessions.get_node(sid, turn_id)
            chain = self.sessions.get_branch(sid, turn_id)
        except (NotFound, ValueError):
            return {}
        out: dict[str, Any] = {"turn": sum(1 for n in chain if n.role == "user")}
        user = next((n for n in reversed(chain) if n.role == "user"), None)
        if user is not None:
            out["prompt"] = (user.text.strip().splitlines() or [""])[0][:120]
        out.update(self._branch(sid, turn_id, tips))
        call = _edit_call(node, path)
        if call is not None:
            out["tool_call"] = {"id": call.id, "name": call.name, "title": call.title}
            if call.approval:
                out["approval"] = dict(call.approval)
        return out

    def _branch(self, sid: str, node_id: str,
                tips: dict[str, list[tuple[str, set[str]]]]) -> dict[str, Any]:
        """The branch holding a node: the active one if it does, else a named one, else the
        oldest (``tips`` caches each session's tips and their chains for one blame)."""
        idx = self.sessions.index(sid)
        names = idx.meta.get("branches") or {}
        active = idx.meta.get("headId")
        if sid not in tips:
            tips[sid] = [(tip, {n.id for n in idx.chain(tip)}) for tip in idx.tips()]
        holding = [tip for tip, chain in tips[sid] if node_id in chain]
        if not holding:
            return {}
        named = [t for t in holding if (names.get(t) or {}).get("name")]
        tip = active if active in holding else (named[0] if named else holding[0])
        out: dict[str, Any] = {"branch_head_id": tip}
        name = (names.get(tip) or {}).get("name")
        if name:
            out["branch"] = name
        return out


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
