"""The context engine's shortcuts equal the plain, from-scratch computations they replace."""

from __future__ import annotations

import random
from pathlib import Path

from tests.context.convo import Turn, build_chain, prepare

from openprogram_lsp.context.commit import messages_digest
from openprogram_lsp.context.engine import ContextEngine, pick_summary
from openprogram_lsp.context.prefix import PrefixCache
from openprogram_lsp.context.render import RenderCache, render_segments
from openprogram_lsp.context.types import ChainIds
from openprogram_lsp.core.chain import NodeChain
from openprogram_lsp.core.types import Message, Node, Usage
from openprogram_lsp.store.session_store import SessionStore


def plain_pick(history: list[Node], summaries: list[Node]) -> tuple[Node | None, int]:
    """The whole-chain version: every position, then the summary reaching furthest."""
    pos = {n.id: i for i, n in enumerate(history)}
    best, best_pos = None, -1
    for s in summaries:
        through = s.metadata.get("through") or s.caller
        p = pos.get(through) if isinstance(through, str) else None
        if p is None or (p >= len(history) - 1 and history[-1].role == "user"):
            continue
        if p > best_pos:
            best, best_pos = s, p
    return best, best_pos + 1


def test_pick_summary_equals_the_whole_chain_version() -> None:
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(0, 40)
        history = [Node(id=f"n{i}", role=rng.choice(["user", "assistant"]), text="x")
                   for i in range(n)]
        summaries = []
        for k in range(rng.randint(0, 4)):
            through = rng.choice([f"n{rng.randint(0, 45)}", None])
            meta = {"through": through} if through and rng.random() < 0.7 else {}
            summaries.append(Node(id=f"s{k}", role="summary", text="s",
                                  caller=through or f"n{rng.randint(0, 45)}", metadata=meta))
        want, want_start = plain_pick(history, summaries)
        ids = [n.id for n in history]
        indexed = NodeChain(ids, lambda want, h=history: [h[int(i[1:])] for i in want],
                            positions={nid: i for i, nid in enumerate(ids)})
        for chain in (history, indexed):  # searched from the end; looked up per summary
            got, start = pick_summary(chain, summaries)
            assert (got.id if got else None, start if got else 0) == \
                (want.id if want else None, want_start if want else 0)


def test_chain_ids_is_the_id_list_of_a_prefix() -> None:
    nodes = [Node(id=f"n{i}", role="user", text="x") for i in range(5)]
    ids = ChainIds(nodes, 3)
    assert list(ids) == ["n0", "n1", "n2"] == ids and len(ids) == 3
    assert ids[-1] == "n2" and ids[1:] == ["n1", "n2"] and "n2" in ids and "n3" not in ids
    assert ChainIds(nodes, 9) == [n.id for n in nodes] and not ChainIds()


def check(prefixes: PrefixCache, chain: list[Node] | NodeChain, summary: Node | None = None,
          start: int = 0) -> None:
    """The carried rendering equals a from-scratch one (of the chain's bodies, in a list)."""
    got = prefixes.render("s", NodeChain.of(chain), summary, start, RenderCache(), 600.0)
    want = render_segments(list(chain), summary, start)
    assert [(s.node.id, s.turn, s.tokens) for s in got.segments] == \
        [(s.node.id, s.turn, s.tokens) for s in want]
    assert got.messages == [m for s in want for m in s.messages]
    assert got.tokens == sum(s.tokens for s in want)
    assert got.chars == sum(len(m.content) for s in want for m in s.messages)
    assert got.kept == [s.node.id for s in want]


def test_the_carried_rendering_is_redone_from_the_first_changed_node() -> None:
    prefixes = PrefixCache()
    chain = build_chain([Turn(user=f"q{i}") for i in range(6)])
    check(prefixes, chain[:5])
    before = prefixes.reused
    check(prefixes, chain)  # extended: the first five carried over
    assert prefixes.reused == before + 5
    edited = [*chain[:3], chain[3].model_copy(update={"text": "rewritten"}), *chain[4:]]
    check(prefixes, edited)  # an edit of history: redone from that node on
    other = build_chain([Turn(user="q0"), Turn(user="another line")])
    check(prefixes, other)  # another branch: the chain no longer runs through the last node
    restarted = [n.model_copy() for n in chain]
    check(prefixes, restarted)  # new objects (a reloaded session): nothing carried
    summary = Node(id="sum", role="summary", text="earlier", caller=chain[3].id,
                   metadata={"through": chain[3].id})
    check(prefixes, chain, summary, 4)  # compaction: another start and summary
    check(prefixes, chain, summary, 4)
    check(prefixes, chain[:4])  # shorter than what is carried: done again


def test_a_store_chain_is_checked_through_the_body_log(tmp_path: Path) -> None:
    """On a store's chain the carried part is checked by asking which bodies were written or
    dropped since, not body by body; each way of changing one is seen."""
    store = SessionStore(tmp_path)
    sid = store.create_session()
    pred = None
    for node in build_chain([Turn(user=f"q{i}") for i in range(8)], open_last=False):
        pred = store.append(sid, node.model_copy(update={"predecessor": pred})).id
    prefixes = PrefixCache()
    head = pred

    def turn(text: str) -> None:
        nonlocal head
        user = store.append(sid, Node(id=f"u_{text}", role="user", text=text, predecessor=head))
        chain = store.chain_view(sid, head).plus(user)
        check(prefixes, chain)
        reply = store.append(sid, Node(id=f"a_{text}", role="assistant", text=f"re {text}",
                                       predecessor=user.id, status="done"))
        head = reply.id

    turn("first")
    turn("second")
    assert prefixes.by_log == 1 and prefixes.reused == 17
    ids = store.chain_ids(sid, head)
    store.update_node(sid, ids[3], text="an edit of history")  # a body written
    before = prefixes.reused
    turn("third")
    assert prefixes.reused - before == 3 and prefixes.by_log == 2  # up to the edited node
    store.index(sid).nodes.drop(ids[5])  # another process rewrote it: read it again
    before = prefixes.reused
    turn("fourth")
    assert prefixes.reused - before == 5
    log = store.index(sid).nodes.log
    log.keep = 1
    for _ in range(3):
        log.note("elsewhere")  # the log forgets the state's mark: every body compared
    by_log = prefixes.by_log
    turn("fifth")
    assert prefixes.by_log == by_log
    turn("sixth")  # and the log answers again
    assert prefixes.by_log == by_log + 1


def test_a_hook_message_goes_on_from_the_carried_digest_and_size() -> None:
    engine = ContextEngine()
    chain = build_chain([Turn(user=f"q{i}") for i in range(5)])
    for carried in (True, False):
        prep = prepare(engine, chain)
        if not carried:  # a prep whose messages are not the carried rendering's
            prep.messages = list(prep.messages)
        note = Message(role="user", content="the build is broken")
        engine.append_message(prep, note)
        assert list(prep.messages)[-1] is note
        assert (prep.known is not None) is carried
        sent = prep.transcript()
        assert sent.content_chars() == sum(len(m.content) for m in prep.messages)
        record = engine.after_turn(session_id="s", turn_id="t", prep=prep, usage=Usage())
        assert record["messagesDigest"] == messages_digest(prep.messages)
        assert record["messages"] == len(prep.messages)
