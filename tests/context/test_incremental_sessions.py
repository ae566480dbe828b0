"""Seeded random long sessions on a real store: what a turn prepares through the engine's caches
and the lazy chain equals a from-scratch preparation (fresh engine, every body in a list).

Sessions fork (with and without a rules reset), switch branches, compact (summaries written to
the store), run tool calls, have idle gaps, rewrite an older node (edit of history, here or by
another process) and restart (a new store, so every node object is new). Each turn's
ContextCommit, read back from the store, names exactly the ids the from-scratch preparation
rendered, and its ``replaced``/``protected`` lists (stored as deltas where they can be) are
the turn's.
"""

from __future__ import annotations

import asyncio
import json
import random
from functools import partial
from pathlib import Path

import pytest
from tests.context.convo import SYSTEM, T0, TOOLS, iso

from openprogram_lsp.context.budget import Calibration
from openprogram_lsp.context.commit import (
    ContextCommit,
    context_digest,
    kept_ids,
    messages_digest,
    replay,
)
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.context.types import ContextConfig, SummaryRequest, TurnPrep
from openprogram_lsp.core.types import Node, ToolCallRecord, Usage
from openprogram_lsp.dispatcher.history import RulesScopes, rules_branch
from openprogram_lsp.store import context_deltas
from openprogram_lsp.store.session_handle import chain_summaries
from openprogram_lsp.store.session_store import SessionStore

WINDOW = 3000
STEPS = 50


def engine() -> ContextEngine:
    return ContextEngine(config=ContextConfig(microcompact_min_tokens=60, gap_threshold_seconds=600,
                                              snip_max_ratio=0.4, target_ratio=0.6),
                         calibration=Calibration())


def same(a: TurnPrep, b: TurnPrep) -> None:
    assert [m.wire() for m in a.messages] == [m.wire() for m in b.messages]
    assert (a.estimate, a.path, a.node_ids, a.summary_node_id, list(a.summarised), a.snipped,
            a.replaced, a.protected, a.start) == \
        (b.estimate, b.path, b.node_ids, b.summary_node_id, list(b.summarised), b.snipped,
         b.replaced, b.protected, b.start)


async def summarize(req: SummaryRequest) -> str:
    return f"Summary of {len(req.messages[0].content)} characters of conversation."


@pytest.mark.parametrize("seed", [1, 2])
def test_incremental_turns_equal_from_scratch(tmp_path: Path, seed: int,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(context_deltas, "SHORT", 0)  # short lists as deltas too (more of them)
    rng = random.Random(seed)
    store = SessionStore(tmp_path)
    sid = store.create_session()
    eng, scopes = engine(), RulesScopes()
    clock, last_at = 0.0, None
    head: str | None = None
    tips: list[str] = []
    seen: set[str] = set()
    idle = 0  # segments the idle-gap pass carried on instead of scanning again
    deltas = 0  # records whose replaced/protected lists were stored as a change
    for t in range(STEPS):
        roll = rng.random()
        rules = None
        if head is not None and roll < 0.12:  # fork from an earlier message of this branch
            chain = store.chain_ids(sid, head)
            head = rng.choice([i for i in chain if store.get_node(sid, i).role == "assistant"]
                              or chain)
            rules = rng.choice([None, "reset", "copy"])
        elif tips and roll < 0.2:  # switch to another branch
            head = rng.choice(tips)
        elif roll < 0.25 and t > 10:  # restart: every node object is read again
            store = SessionStore(tmp_path)
            if rng.random() < 0.5:
                idle += eng.idle.carried
                eng, scopes = engine(), RulesScopes()
        elif roll < 0.35 and head is not None:  # edit of history: an older reply rewritten
            old = rng.choice(store.chain_ids(sid, head))
            node = store.get_node(sid, old)
            # here, or by another process (this store drops the body it kept)
            writer = store if roll < 0.3 else SessionStore(tmp_path)
            if node.role == "assistant":
                writer.update_node(sid, old, text=node.text + " (edited)")
        clock += rng.choice([20.0, 40.0, 900.0])
        meta = {"rules": rules} if rules else {}
        user = store.append(sid, Node(id=f"u{t}", role="user", predecessor=head,
                                      created_at=iso(clock), metadata=meta,
                                      text=(f"turn {t}: look at pkg/m{t % 7}.py"
                                            if rng.random() < 0.3 else f"turn {t}: go on. ")
                                      * rng.randint(1, 12)))
        lazy = store.chain_view(sid, user.id)
        plain = store.get_branch(sid, user.id)
        assert [n.id for n in lazy] == [n.id for n in plain] == lazy.ids()
        assert scopes.scope(sid, lazy) == rules_branch(plain)
        now = T0.timestamp() + clock
        kw = dict(session_id=sid, system=SYSTEM, tools=TOOLS, model="m", context_window=WINDOW,
                  last_turn_at=last_at, now=now)
        prep = eng.prepare(history=lazy, summaries=chain_summaries(store.index(sid), lazy), **kw)
        fresh = engine().prepare(history=plain,
                                 summaries=chain_summaries(store.index(sid), plain), **kw)
        same(prep, fresh)
        if eng.should_auto_compact(prep):
            prep = asyncio.run(eng.auto_compact(prep, summarize=summarize,
                                                persist=partial(store.append, sid)))
        clock += 5
        calls = [ToolCallRecord(id=f"c{t}_{k}", name="read_file", kind="read", step=0,
                                input={"path": f"pkg/m{t}_{k}.py"}, status="completed",
                                output=f"def handler_{t}_{k}(x):\n"
                                + "    return x\n" * rng.randint(0, 60))
                 for k in range(rng.randint(0, 2))]
        aid = f"{user.id}_reply"
        store.append(sid, Node(id=aid, role="assistant", predecessor=user.id, status="done",
                               created_at=iso(clock - 4), text=f"done {t}", tool_calls=calls,
                               metadata={"steps": [f"reading {t}", f"done {t}"] if calls
                                         else [f"done {t}"], "finishedAt": iso(clock)}))
        record = eng.after_turn(session_id=sid, turn_id=aid, prep=prep, usage=Usage())
        assert record["messagesDigest"] == messages_digest(prep.messages)
        assert context_digest(record) == ContextCommit.model_validate(record).digest_view()
        store.write_context_commit(sid, aid, record)
        stored = ContextCommit.model_validate(store.read_context_commit(sid, aid))
        assert stored.kept == kept_ids(prep) and stored.snipped == prep.snipped
        assert stored.summarised == list(prep.summarised)
        # replaced/protected maybe stored as a delta: read back, what the turn prepared (and,
        # when it did not compact, what the from-scratch preparation has)
        assert (stored.replaced, stored.protected) == (prep.replaced, prep.protected)
        if prep.path in ("none", "microcompact"):
            assert (stored.replaced, stored.protected) == (fresh.replaced, fresh.protected)
        assert stored == ContextCommit.model_validate(record).expanded(store.chain_ids(sid, aid))
        deltas += "listsBase" in raw_context(store, sid, aid)
        seen.update([prep.path, *prep.actions, "fork" if rules else "", "tools" if calls else ""])
        if t % 6 == 5:
            nodes = {n.id: n for n in store.nodes(sid)}
            assert messages_digest(replay(stored, nodes)) == stored.messages_digest
            assert messages_digest(replay(ContextCommit.model_validate(record), nodes)) \
                == stored.messages_digest
        head, last_at = aid, iso(clock)
        tips = store.index(sid).tips()
    assert {"snip", "compact", "microcompact", "fork", "tools"} <= seen, seen
    assert eng.prefixes.reused > 0  # the carried-over renderings were used, and checked
    assert eng.prefixes.by_log > 0  # ... through the store's body log
    assert idle + eng.idle.carried > 0, "the idle-gap pass was never carried on"
    assert deltas > 8, f"{deltas} records stored as a delta"


def raw_context(store: SessionStore, sid: str, turn: str) -> dict[str, object]:
    """A turn's ContextCommit file as stored."""
    path = store.session_dir(sid) / "nodes" / store.index(sid).files[turn]
    data: dict[str, object] = json.loads(path.with_name(path.name[:-5] + ".context.json")
                                         .read_bytes())
    return data
