"""The rules scope of a chain: the nearest reset or copy fork above its tip."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.core.chain import NodeChain
from openprogram_lsp.core.types import Node
from openprogram_lsp.dispatcher.history import RulesScopes, rules_branch
from openprogram_lsp.store.session_store import SessionStore


def user(nid: str, **meta: str) -> Node:
    return Node(id=nid, role="user", text="x", metadata=dict(meta))


def test_the_nearest_reset_or_copy_fork_scopes_the_rules() -> None:
    reply = Node(id="a1", role="assistant", text="ok", metadata={"rules": "reset"})
    assert rules_branch([]) is None
    assert rules_branch([user("u1"), reply, user("u2", rules="inherit")]) is None
    assert rules_branch([user("u1", rules="reset"), reply, user("u2")]) == "u1"
    assert rules_branch([user("u1", rules="reset"), user("u2", rules="copy"), user("u3")]) \
        == "u2"


def chain_of(*specs: tuple[str, str | None]) -> list[Node]:
    out: list[Node] = []
    for nid, rules in specs:
        meta = {"rules": rules} if rules else {}
        out.append(Node(id=nid, role="user", text="x", predecessor=out[-1].id if out else None,
                        metadata=meta))
    return out


def test_remembered_scopes_follow_extension_branch_switch_and_forks() -> None:
    scopes = RulesScopes(capacity=2)
    line = chain_of(("u1", None), ("u2", "reset"), ("u3", None))
    assert scopes.scope("s", line) == "u2"
    longer = [*line, Node(id="u4", role="user", text="x", predecessor="u3")]
    assert scopes.scope("s", longer) == "u2"  # only u4 looked at; the remembered answer holds
    fork = [*longer, Node(id="u5", role="user", text="x", predecessor="u4",
                          metadata={"rules": "copy"})]
    assert scopes.scope("s", fork) == "u5"  # a new fork on the same line
    # another branch from u1: the remembered position holds another node, so it is rescanned
    other = [line[0], Node(id="v2", role="user", text="x", predecessor="u1")]
    assert scopes.scope("s", other) is None
    assert scopes.scope("s", line[:2]) == "u2"  # a shorter chain (an earlier node): rescanned
    assert scopes.scope("s", []) is None
    # evicted sessions are recomputed; results always equal the plain scan
    for sid in ("a", "b", "c", "s"):
        for chain in (line, longer, fork, other, line[:1]):
            assert scopes.scope(sid, chain) == rules_branch(chain)


def _forked_session(home: Path) -> tuple[SessionStore, str, list[str]]:
    """A session of 60 user nodes with a reset fork at u20 and a copy fork off u40."""
    store = SessionStore(home)
    sid = store.create_session()
    pred = None
    for i in range(60):
        rules = "reset" if i == 20 else None
        pred = store.append(sid, user(f"u{i}", **({"rules": rules} if rules else {}))
                            .model_copy(update={"predecessor": pred}), advance_head=True).id
    store.append(sid, user("c0", rules="copy").model_copy(update={"predecessor": "u40"}))
    store.append(sid, user("c1").model_copy(update={"predecessor": "c0"}))
    return store, sid, ["u59", "u19", "u20", "c1", "u45"]


def test_after_a_restart_only_the_recorded_forks_are_read(tmp_path: Path) -> None:
    store, sid, heads = _forked_session(tmp_path / "home")
    assert store.rules_forks(sid) == {"u20", "c0"}
    for head in heads:
        fresh = SessionStore(tmp_path / "home")  # a new process: nothing remembered
        chain = fresh.chain_view(sid, head)
        reads: list[str] = []
        def fetch(ids: list[str], reads: list[str] = reads,
                  fresh: SessionStore = fresh) -> list[Node]:
            reads.extend(ids)
            return fresh.index(sid).nodes.many(ids)

        counted = NodeChain(chain.ids(), fetch)
        scopes = RulesScopes(forks=fresh.rules_forks)
        assert scopes.scope(sid, counted) == rules_branch(list(chain))
        assert set(reads) <= {"u20", "c0"}  # no other body read
        tail = counted.plus(user("new", rules="reset"))  # a node the chain holds itself
        assert RulesScopes(forks=fresh.rules_forks).scope(sid, tail) == "new"


def test_a_session_without_a_readable_record_is_scanned(tmp_path: Path) -> None:
    store, sid, heads = _forked_session(tmp_path / "home")
    record = store.session_dir(sid) / ".git" / "openprogram-rules-forks"
    with open(record, "ab") as fh:
        fh.write(b'"u3')  # torn
    assert store.rules_forks(sid) is None
    record.unlink()  # a session from before the record
    assert store.rules_forks(sid) is None
    store.append(sid, user("late", rules="reset").model_copy(update={"predecessor": "u59"}))
    assert not record.exists()  # never created half-filled
    for head in [*heads, "late"]:
        chain = store.chain_view(sid, head)
        assert RulesScopes(forks=store.rules_forks).scope(sid, chain) == rules_branch(list(chain))
