"""The engine inside real turns: /compact, auto-compaction, ContextCommits, untouched history."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.context.commit import ContextCommit, messages_digest, replay
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event

Make = Callable[..., Dispatcher]


def node_files(home: Path, sid: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (home / "sessions" / sid / "nodes").rglob("*.json")
            if not p.name.endswith(".context.json")}


def test_compact_command_summarises_without_a_reply(make_dispatcher: Make, script: Callable,
                                                    events: list[Event], home: Path) -> None:
    d = make_dispatcher(script([{"text": "First answer."}, {"text": "Second answer."},
                                {"text": "SUMMARY: the user asked two things."},
                                {"text": "Third answer."}]))
    r1 = d.process_user_turn(TurnRequest(text="first question"))
    r2 = d.process_user_turn(TurnRequest(text="second question", session_id=r1.session_id))
    sid, store = r1.session_id, d.services.store
    before = node_files(home, sid)
    r3 = d.process_user_turn(TurnRequest(text="/compact", session_id=sid))
    assert r3.status == "done" and r3.text.startswith("Context compacted")
    assert r3.usage.input_tokens > 0  # the summariser's call is the turn's cost
    # the /compact exchange is recorded (and marked), the summary hangs off the chain
    chain = store.get_branch(sid)
    assert chain[-2].text == "/compact"
    assert all(n.metadata.get("command") == "compact" for n in chain[-2:])
    assert store.head(sid) == r3.assistant_node_id
    summaries = [n for n in store.nodes(sid) if n.role == "summary"]
    assert len(summaries) == 1 and summaries[0].caller == r2.assistant_node_id
    assert summaries[0].text.startswith("SUMMARY: the user asked two things.")
    assert summaries[0].predecessor is None
    assert all(store.index(sid).is_chain_node(n) or n.role in ("tool", "summary")
               for n in store.nodes(sid))
    # earlier nodes are byte-for-byte unchanged
    after = node_files(home, sid)
    assert all(after[k] == v for k, v in before.items())
    ev = [e for e in events if e.type == "context.compacted"]
    assert len(ev) == 1 and ev[0].payload["path"] == "manual"
    assert ev[0].payload["summary_node_id"] == summaries[0].id
    # the next turn's model sees the summary instead of the first two exchanges
    r4 = d.process_user_turn(TurnRequest(text="third question", session_id=sid))
    assert r4.status == "done" and r4.text == "Third answer."
    commit = ContextCommit.model_validate(store.read_context_commit(sid, r4.assistant_node_id))
    assert commit.kept == [summaries[0].id, r4.user_node_id]
    assert commit.summary_node_id == summaries[0].id
    assert r1.user_node_id in commit.summarised and commit.messages == 2
    # what the model saw can be rebuilt exactly from the commit and the stored nodes
    nodes = {n.id: n for n in store.nodes(sid)}
    assert messages_digest(replay(commit, nodes)) == commit.messages_digest
    # the ContextCommit digest travels with the history
    last = store.get_node(sid, r4.assistant_node_id)
    assert last.metadata["context"]["summaryNodeId"] == summaries[0].id
    manual = store.read_context_commit(sid, r3.assistant_node_id)
    assert manual["path"] == "manual" and manual["summarizerUsage"]["inputTokens"] > 0


def test_compact_with_nothing_to_compact(make_dispatcher: Make, script: Callable) -> None:
    d = make_dispatcher(script([]))
    r = d.process_user_turn(TurnRequest(text="/compact"))
    assert r.status == "done" and r.text == "Nothing to compact yet."


def test_small_window_override_compacts_turns_of_the_scripted_model(
        make_dispatcher: Make, script: Callable, events: list[Event],
        monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    long = "word " * 700  # ~875 tokens a reply
    # the summariser's calls take responses too (long ones: clipped to the summary budget)
    d = make_dispatcher(script([{"text": long}] * 40),
                        settings=load_settings(env={"OPENPROGRAM_CONTEXT_WINDOW": "8000"},
                                               user_file=False))
    sid = None
    for i in range(14):
        r = d.process_user_turn(TurnRequest(text=f"question {i} about pkg/m{i}.py",
                                            session_id=sid))
        assert r.status == "done", (i, r.error)
        sid = r.session_id
    assert sid is not None
    store = d.services.store
    compacted = [e for e in events if e.type == "context.compacted"]
    assert compacted, "a small window must trigger compaction"
    for e in compacted:
        assert e.payload["tokens_after"] < e.payload["tokens_before"]
        assert e.payload["context_window"] == 8000
    commits = [store.read_context_commit(sid, n.id) for n in store.get_branch(sid)
               if n.role == "assistant"]
    assert all(c and c["contextWindow"] == 8000 for c in commits)
    # the prompt and tool schemas are ~75% of 8,000 tokens: turns go on over 80% within the
    # cooldown after a compaction, a request asks for the reply room the window has left, and
    # the prompt always leaves at least an eighth of the window for it
    assert all(c["estimateInput"] + min(c["outputReserve"], 1000) <= 8000 for c in commits if c)
    paths = [c["path"] for c in commits if c]
    assert "compact" in paths and ("compact", "compact") not in set(itertools.pairwise(paths))
