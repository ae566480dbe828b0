"""ACP forks as branches of the stored session: ``session/fork`` answers ``<sid>~<key>``.

ACP's fork makes a new session; ours is a branch of the same conversation DAG, so every front
end (the LSP editors, ``openprogram-lsp branches``, another ACP client) sees the same branch.
The fork's record lives in the stored session's meta (``acpForks[key]``: the node it starts
after, its branch name, its rules): any process can resume ``<sid>~<key>``. The branch's
first prompt starts it after that node, named; later prompts continue its named tip (a named
tip keeps its name as it grows), and each of its turns makes it the session's active branch,
as ``openprogram/fork`` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from openprogram_lsp.core.errors import InvalidParams, NotFound
from openprogram_lsp.core.ids import is_safe_id, new_id, now_iso
from openprogram_lsp.store.session_store import SessionStore

SEP = "~"
META_KEY = "acpForks"
MAX_NAME = 80
_NAME = re.compile(r"[^\x00-\x1f\x7f]+")
Rules = Literal["inherit", "reset", "copy"]


def split(acp_id: str) -> tuple[str, str | None]:
    """(stored session id, fork key or None) of an ACP session id; -32602 when malformed."""
    sid, sep, key = acp_id.partition(SEP)
    if not is_safe_id(sid) or (sep and not is_safe_id(key)):
        raise InvalidParams(f"sessionId: {acp_id!r} is not a valid session id")
    return sid, (key if sep else None)


def join(sid: str, key: str) -> str:
    """The ACP id of fork ``key`` of session ``sid``."""
    return f"{sid}{SEP}{key}"


@dataclass(frozen=True, slots=True)
class Fork:
    """One fork's record: where it starts, its branch's name, its rules scope."""

    key: str
    from_node: str | None
    name: str
    rules: Rules = "inherit"
    started: bool = False

    def record(self) -> dict[str, Any]:
        return {"from": self.from_node, "name": self.name, "rules": self.rules,
                "started": self.started, "createdAt": now_iso()}


def record(store: SessionStore, sid: str, key: str) -> Fork:
    """The stored record of a fork; NotFound when the session has no such fork."""
    raw = (store.meta(sid).get(META_KEY) or {}).get(key)
    if not isinstance(raw, dict):
        raise NotFound(f"sessionId: session {sid!r} has no fork {key!r}")
    given = raw.get("rules")
    rules: Rules = given if given in ("inherit", "reset", "copy") else "inherit"
    return Fork(key=key, from_node=raw.get("from") if isinstance(raw.get("from"), str) else None,
                name=str(raw.get("name") or key), rules=rules, started=bool(raw.get("started")))


def listed(meta: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, branch name) of a session's forks that hold a message, in creation order."""
    raw = meta.get(META_KEY)
    if not isinstance(raw, dict):
        return []
    return [(key, str(rec.get("name") or key)) for key, rec in raw.items()
            if isinstance(rec, dict) and rec.get("started") and is_safe_id(str(key))]


def tip(store: SessionStore, sid: str, fork: Fork) -> str | None:
    """The fork's branch tip (None before its first message); NotFound when its branch is
    gone (renamed or its name given to another branch by hand)."""
    head = store.find_branch(sid, fork.name)
    if head is None and fork.started:
        raise NotFound(f"sessionId: the branch {fork.name!r} of this fork was renamed or "
                       "removed; load the session itself and use /branches")
    return head


def check_name(store: SessionStore, sid: str, name: Any) -> str:
    """A branch name the client gave: text, short, unused in the session."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME \
            or not _NAME.fullmatch(name):
        raise InvalidParams(f"_meta.openprogram.name: a branch name is 1 to {MAX_NAME} "
                            "printable characters")
    clean = str(name).strip()
    if store.find_branch(sid, clean) is not None or clean in _pending_names(store, sid):
        raise InvalidParams(f"_meta.openprogram.name: the session already has a branch "
                            f"named {clean!r}")
    return clean


def _pending_names(store: SessionStore, sid: str) -> set[str]:
    forks = store.meta(sid).get(META_KEY) or {}
    return {str(v.get("name")) for v in forks.values() if isinstance(v, dict)}


def free_name(store: SessionStore, sid: str) -> str:
    """The first unused ``fork-N`` of the session."""
    taken = _pending_names(store, sid) | {
        str(v.get("name")) for v in (store.meta(sid).get("branches") or {}).values()
        if isinstance(v, dict)}
    n = 1
    while f"fork-{n}" in taken:
        n += 1
    return f"fork-{n}"


def create(store: SessionStore, sid: str, from_node: str | None, name: str,
           rules: Rules) -> Fork:
    """Record a new fork of ``sid`` starting after ``from_node`` (None: a new root)."""
    fork = Fork(key=new_id("f"), from_node=from_node, name=name, rules=rules)
    with store.locked(sid):
        forks = dict(store.meta(sid).get(META_KEY) or {})
        forks[fork.key] = fork.record()
        store.update_meta(sid, **{META_KEY: forks})
    return fork


def mark_started(store: SessionStore, sid: str, fork: Fork) -> None:
    """The fork's first turn named its branch: from now on it follows that name."""
    with store.locked(sid):
        forks = dict(store.meta(sid).get(META_KEY) or {})
        if isinstance(forks.get(fork.key), dict):
            forks[fork.key] = {**forks[fork.key], "started": True}
            store.update_meta(sid, **{META_KEY: forks})


def forget(store: SessionStore, sid: str, key: str) -> None:
    """Drop a fork's record (its branch, if it has messages, stays in the session)."""
    with store.locked(sid):
        forks = dict(store.meta(sid).get(META_KEY) or {})
        if forks.pop(key, None) is not None:
            store.update_meta(sid, **{META_KEY: forks})
