"""A long session in process on a real SessionStore, then real turns on top of it.

The suite runs 500 turns: every path is taken many times by then (about 70 snips and 70
compactions, 12 structural summaries, the idle gaps' microcompact) and each turn's checks are
the same at any length; ``CONTEXT_LONG_TURNS=2000`` runs the full size (about 3.5 ms of CPU a
turn, linear in the count)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.context.convo import SYSTEM, T0, TOOLS, check_pairing, iso

from openprogram_lsp.config import load_settings
from openprogram_lsp.context.budget import Calibration
from openprogram_lsp.context.commit import ContextCommit, messages_digest, replay
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.context.types import ContextConfig, SummaryRequest
from openprogram_lsp.core.types import Node, ToolCallRecord, TurnRequest, Usage
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.store.session_handle import chain_summaries
from openprogram_lsp.store.session_store import SessionStore

TURNS = int(os.environ.get("CONTEXT_LONG_TURNS", "500"))
WINDOW = 8000


async def test_a_long_session_stays_within_the_window(
        home: Path, make_dispatcher: Callable[..., Dispatcher], events: list[Event],
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = SessionStore(home)
    sid = store.create_session(workspace=str(home))
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append, types=["context.compacted"])
    # snip may hide what separates the trigger from the target, so every path is taken
    eng = ContextEngine(config=ContextConfig(microcompact_min_tokens=200, snip_max_ratio=0.4),
                        calibration=Calibration(), bus=bus)
    calls = 0

    async def summarize(req: SummaryRequest) -> str:
        nonlocal calls
        calls += 1
        if calls % 7 == 0:
            raise RuntimeError("summariser unavailable")
        return f"Summary {calls}: the user is refactoring modules; keep the API stable."

    written: dict[str, bytes] = {}
    nodes_dir = home / "sessions" / sid / "nodes"

    def remember(node_id: str) -> None:
        name = store.index(sid).files[node_id]
        written[name] = (nodes_dir / name).read_bytes()

    pred: str | None = None
    clock = 0.0
    last_turn_at: str | None = None
    paths: Counter[str] = Counter()
    for t in range(TURNS):
        clock += 7200 if t % 97 == 0 else 30  # an idle gap now and then
        path = f"pkg/module_{t % 40}.py"
        mention = f" Compare with pkg/module_{(t - 3) % 40}.py." if t % 5 == 0 else ""
        user = Node(id=f"u{t}", role="user", predecessor=pred, created_at=iso(clock),
                    text=f"Turn {t}: refactor {path} to use the new config API.{mention}")
        store.append(sid, user)
        remember(user.id)
        history = store.get_branch(sid, user.id)
        head = store.head(sid)
        prep = eng.prepare(session_id=sid, history=history, system=SYSTEM, tools=TOOLS,
                           model="long", context_window=WINDOW, last_turn_at=last_turn_at,
                           summaries=chain_summaries(store.index(sid), history),
                           now=T0.timestamp() + clock)
        if eng.should_auto_compact(prep):
            prep = await eng.auto_compact(prep, history=history, summarize=summarize,
                                          persist=lambda n: store.append(sid, n))
        # every turn: within budget, calls paired, the new message last, head untouched
        assert not eng.should_auto_compact(prep), (t, prep.path, prep.usage_ratio)
        check_pairing(prep.messages)
        assert prep.messages[-1].content == user.text
        assert store.head(sid) == head
        paths[prep.path] += 1
        # the assistant reply: a read with a sizeable result, then a short answer
        clock += 5
        aid = f"{user.id}_reply"
        record = ToolCallRecord(id=f"c{t}", name="read_file", kind="read", input={"path": path},
                                status="completed", step=0,
                                output=f"# {path}\n" + f"def handler_{t}(cfg):\n" +
                                "    return cfg.get('key')  # old API\n" * 60)
        reply = Node(id=aid, role="assistant", predecessor=user.id, created_at=iso(clock - 4),
                     status="done", text=f"Reading {path}.\n\nUpdated {path}.",
                     tool_calls=[record],
                     metadata={"steps": [f"Reading {path}.", f"Updated {path}."],
                               "finishedAt": iso(clock)})
        store.append(sid, reply)
        remember(aid)
        commit = eng.after_turn(session_id=sid, turn_id=aid, prep=prep, usage=Usage(),
                                first_call_input_tokens=int(prep.raw_input * 1.1))
        store.write_context_commit(sid, aid, commit)
        pred, last_turn_at = aid, iso(clock)

    print("paths over the session:", dict(paths))
    assert paths["snip"] > 0 and paths["compact"] > 0 and paths["structural"] > 0, paths
    assert paths["microcompact"] > 0 or any(
        "microcompact" in (store.read_context_commit(sid, f"u{t}_reply") or {}).get("actions", [])
        for t in range(TURNS)), paths
    assert {e.payload["path"] for e in seen} >= {"snip", "compact", "structural"}
    # compaction never rewrote a stored node, and never moved the head
    for name, data in written.items():
        assert (nodes_dir / name).read_bytes() == data
    assert store.head(sid) is None  # compaction never set a head; the chain is walked by id
    store.set_head(sid, f"u{TURNS - 1}_reply")
    assert len(store.get_branch(sid)) == 2 * TURNS
    summaries = [n for n in store.nodes(sid) if n.role == "summary"]
    assert summaries and all(n.predecessor is None and n.caller for n in summaries)
    # what the model saw on a turn is rebuilt exactly from its ContextCommit
    all_nodes = {n.id: n for n in store.nodes(sid)}
    for t in range(0, TURNS, 25):
        c = ContextCommit.model_validate(store.read_context_commit(sid, f"u{t}_reply"))
        assert messages_digest(replay(c, all_nodes)) == c.messages_digest, (t, c.path)
    last = ContextCommit.model_validate(store.read_context_commit(sid, f"u{TURNS - 1}_reply"))
    assert last.estimate < 0.85 * WINDOW and abs(last.calibration - 1.1) < 0.05

    # three real turns through the dispatcher on the same session, small window, offline model
    d = make_dispatcher(None, permission_mode="bypass", settings=load_settings(
        env={"OPENPROGRAM_CONTEXT_WINDOW": str(WINDOW)}, user_file=False))
    for text in ("list .", "read pkg/module_1.py", "what now?"):
        r = await d.run_turn(TurnRequest(text=text, session_id=sid))
        assert r.status == "done", r.error
        c = d.services.store.read_context_commit(sid, r.assistant_node_id)
        # within the cooldown over 80%, but the prompt leaves an eighth of the window to reply
        assert c is not None and c["estimateInput"] + WINDOW // 8 <= WINDOW
    assert len(d.services.store.get_branch(sid)) == 2 * TURNS + 6
