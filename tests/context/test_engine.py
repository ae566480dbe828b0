"""The engine's three-stage path, reference protection, summaries on forks, ContextCommit."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError
from tests.context.convo import Call, Turn, build_chain, check_pairing, iso, prepare

from openprogram_lsp.config import load_settings
from openprogram_lsp.config.sections.context import ContextSection
from openprogram_lsp.context.budget import Calibration
from openprogram_lsp.context.commit import ContextCommit
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.context.types import ContextConfig, SummaryRequest
from openprogram_lsp.core.errors import ConfigError, TurnCancelled
from openprogram_lsp.core.types import Node, Usage
from openprogram_lsp.events.bus import Event, EventBus

FILLER = "lorem ipsum dolor sit amet " * 40  # ~270 tokens


def make_engine(**cfg: object) -> tuple[ContextEngine, list[Event]]:
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)
    cfg.setdefault("auto_compact_ratio", 0.8)  # the chains below are sized for 80%
    return ContextEngine(config=ContextConfig(**cfg),  # type: ignore[arg-type]
                         calibration=Calibration(), bus=bus), seen


class Summariser:
    """A scripted summariser that records its requests."""

    def __init__(self, reply: str | Exception = "The user wants X; files a.py, b.py.") -> None:
        self.reply = reply
        self.requests: list[SummaryRequest] = []

    async def __call__(self, req: SummaryRequest) -> str:
        self.requests.append(req)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def chatty(n: int) -> list[Turn]:
    """n turns of unrelated chat, each about 550 tokens."""
    return [Turn(f"question {i}: {FILLER}", steps=[(f"answer {i}: {FILLER}", [])])
            for i in range(n)]


def same_file(n: int) -> list[Turn]:
    """n turns that all read and then mention the same file (every result is referenced)."""
    out = [Turn(f"look at core.py again, round {i}",
                steps=[("Reading core.py.", [Call("core.py", f"def core_{i}():\n" + FILLER)]),
                       ("core.py looks fine.", [])]) for i in range(n)]
    out.append(Turn("and what about core.py now?"))
    return out


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_under_budget_nothing_happens() -> None:
    eng, seen = make_engine()
    prep = prepare(eng, build_chain(chatty(3)), window=128_000)
    assert not eng.should_auto_compact(prep) and not eng.should_recommend(prep)
    assert prep.path == "none" and not seen


def test_snip_drops_oldest_whole_turns_and_is_announced() -> None:
    eng, seen = make_engine(snip_max_ratio=0.4)  # snip may hide the 30% from 80% to 50%
    chain = build_chain([*chatty(16), Turn("final question")])
    prep = prepare(eng, chain, window=16_000)
    assert eng.should_auto_compact(prep)
    summ = Summariser()
    new = run(eng.auto_compact(prep, history=chain, summarize=summ))
    assert new.path == "snip" and not summ.requests  # free: no model call
    assert new.snipped[:2] == ["u0", "u0_reply"]
    assert not eng.should_auto_compact(new) and new.estimate < prep.estimate
    assert new.messages[-1].content == "final question"
    assert "earlier turn(s) were left out" in new.messages[0].content
    check_pairing(new.messages)
    ev = [e for e in seen if e.type == "context.compacted"]
    assert len(ev) == 1 and ev[0].payload["path"] == "snip"
    assert ev[0].payload["tokens_before"] == prep.estimate
    assert ev[0].payload["tokens_after"] == new.estimate


def test_snip_hides_at_most_a_quarter_window_then_compaction_runs() -> None:
    eng, _ = make_engine()
    chain = build_chain([*chatty(14), Turn("final question")])
    prep = prepare(eng, chain, window=8000)
    summ = Summariser()
    new = run(eng.auto_compact(prep, history=chain, summarize=summ))
    assert new.path == "compact" and summ.requests and not new.snipped
    loose, _ = make_engine(snip_max_ratio=1.0)
    assert run(loose.auto_compact(prepare(loose, chain, window=8000), history=chain,
                                  summarize=summ)).path == "snip"


def test_snip_keeps_the_same_floor_on_the_next_turn() -> None:
    eng, _ = make_engine(snip_max_ratio=0.4)
    turns = [*chatty(16), Turn("q1")]
    first = run(eng.auto_compact(prepare(eng, build_chain(turns), window=16_000), history=[],
                                 summarize=None))
    turns[-1] = Turn("q1", steps=[("short answer", [])])
    chain2 = build_chain([*turns, Turn("q2")])
    second = run(eng.auto_compact(prepare(eng, chain2, window=16_000), history=chain2,
                                  summarize=None))
    assert first.path == second.path == "snip"
    assert second.snipped == first.snipped  # same prefix: the provider's cache still holds


def test_compact_when_snip_cannot_fit_then_prepare_again_uses_the_summary() -> None:
    eng, seen = make_engine()
    chain = build_chain(same_file(18))
    prep = prepare(eng, chain, window=8000)
    assert eng.should_auto_compact(prep)
    summ = Summariser()
    written: list[Node] = []
    new = run(eng.auto_compact(prep, history=chain, summarize=summ,
                               persist=lambda n: written.append(n) or n))
    assert new.path == "compact" and len(summ.requests) >= 1
    assert not eng.should_auto_compact(new)
    [node] = written
    assert node.role == "summary" and node.predecessor is None and node.caller
    assert node.metadata["through"] == node.caller and node.metadata["path"] == "compact"
    assert "The user wants X" in node.text and "look at core.py again" in node.text
    assert new.summary_node_id == node.id and new.messages[0].content.endswith(node.text)
    assert set(new.summarised) == set(node.metadata["covers"])
    assert new.messages[-1].content == chain[-1].text
    check_pairing(new.messages)
    ev = [e for e in seen if e.type == "context.compacted"][-1]
    assert ev.payload["path"] == "compact" and ev.payload["summary_node_id"] == node.id
    assert ev.payload["tokens_after"] < ev.payload["tokens_before"]
    # the summariser saw a transcript, not provider tool messages
    assert all(m.role == "user" for r in summ.requests for m in r.messages)
    # next turn: prepare replaces the covered range with the stored summary
    again = prepare(eng, chain, window=8000, summaries=written)
    assert again.summary_node_id == node.id and not eng.should_auto_compact(again)


def test_failing_summariser_gives_a_structural_summary() -> None:
    eng, seen = make_engine()
    chain = build_chain(same_file(18))
    written: list[Node] = []
    new = run(eng.auto_compact(prepare(eng, chain, window=8000), history=chain,
                               summarize=Summariser(RuntimeError("model down")),
                               persist=lambda n: written.append(n) or n))
    assert new.path == "structural" and not eng.should_auto_compact(new)
    assert "Structural summary" in written[0].text and "core.py" in written[0].text
    assert "look at core.py again" in written[0].text  # the user's own words survive
    ev = [e for e in seen if e.type == "context.compacted"][-1]
    assert ev.payload["path"] == "structural" and "model down" in ev.payload["summarizer_error"]


def test_a_second_compaction_folds_in_the_first() -> None:
    eng, _ = make_engine()
    turns = same_file(18)
    chain = build_chain(turns)
    written: list[Node] = []
    persist = lambda n: written.append(n) or n  # noqa: E731
    run(eng.auto_compact(prepare(eng, chain, window=8000), history=chain,
                         summarize=Summariser("first"), persist=persist))
    more = [*turns[:-1], *same_file(18)]
    chain2 = build_chain(more)
    prep2 = prepare(eng, chain2, window=8000, summaries=written)
    assert prep2.summary_node_id == written[0].id and eng.should_auto_compact(prep2)
    summ = Summariser("second")
    new = run(eng.auto_compact(prep2, history=chain2, summarize=summ, persist=persist))
    assert new.path == "compact" and len(written) == 2
    assert written[0].id in written[1].metadata["covers"]
    assert "## Earlier summary" in summ.requests[0].messages[0].content
    assert "round 0" in written[1].text  # user requests carried over from the first summary
    assert set(new.summarised) >= set(written[0].metadata["covers"]) - {written[0].id}


def test_a_summary_does_not_apply_to_a_fork_before_its_range() -> None:
    eng, _ = make_engine()
    chain = build_chain(same_file(18))
    written: list[Node] = []
    run(eng.auto_compact(prepare(eng, chain, window=8000), history=chain,
                         summarize=Summariser(), persist=lambda n: written.append(n) or n))
    fork = [*chain[:4], Node(id="fork_u", role="user", text="another way",
                             predecessor=chain[3].id)]
    prep = prepare(eng, fork, window=8000, summaries=written)
    assert prep.summary_node_id is None and prep.messages[0].content == chain[0].text


def test_snip_keeps_turns_whose_results_are_referenced_later() -> None:
    eng, _ = make_engine(snip_max_ratio=0.4)
    turns = chatty(16)
    turns[1] = Turn("read the config", steps=[("Reading.", [Call("conf/settings.toml",
                                                                 "key = 1\n" + FILLER)])])
    turns.append(Turn("change settings.toml as we saw"))
    chain = build_chain(turns)
    new = run(eng.auto_compact(prepare(eng, chain, window=16_000), history=chain,
                               summarize=None))
    assert new.path == "snip"
    assert "u0" in new.snipped and "u1" not in new.snipped and "u2" in new.snipped
    assert "u1_reply:c1_0_0" in new.protected


def test_microcompact_after_an_idle_gap_clears_old_unreferenced_results() -> None:
    eng, seen = make_engine(microcompact_min_tokens=100)
    turns = [Turn(f"read file {i}", steps=[("Reading.", [Call(f"f{i}.txt", FILLER)])])
             for i in range(9)]
    turns[0] = Turn("read the notes", steps=[("Reading.", [Call("notes.md", FILLER)])])
    turns.append(Turn("compare with notes.md"))
    chain = build_chain(turns)
    last = chain[-2].metadata["finishedAt"]
    fresh = prepare(eng, chain, last_turn_at=last, now=None)
    assert fresh.replaced and fresh.path == "microcompact"
    # 9 results: the 5 most recent are kept, notes.md is referenced, so 3 are cleared
    assert sorted(fresh.replaced) == ["u1_reply:c1_0_0", "u2_reply:c2_0_0", "u3_reply:c3_0_0"]
    ev = [e for e in seen if e.type == "context.compacted"]
    assert ev and ev[0].payload["path"] == "microcompact"
    assert ev[0].payload["tokens_after"] < ev[0].payload["tokens_before"]
    # no gap: nothing is cleared
    assert not prepare(eng, chain, last_turn_at=iso(10**9)).replaced


def test_an_old_gap_in_the_chain_keeps_results_cleared_on_later_turns() -> None:
    eng, seen = make_engine(microcompact_min_tokens=100)
    turns = [Turn(f"read file {i}", steps=[("Reading.", [Call(f"f{i}.txt", FILLER)])])
             for i in range(8)]
    turns.append(Turn("after lunch", gap=7200, steps=[("Hello again.", [])]))
    turns.append(Turn("go on"))
    prep = prepare(build := make_engine(microcompact_min_tokens=100)[0], build_chain(turns))
    assert sorted(prep.replaced) == ["u0_reply:c0_0_0", "u1_reply:c1_0_0", "u2_reply:c2_0_0"]
    assert prep.path == "none" and "microcompact" in prep.actions  # sticky, not announced
    assert not seen and build is not eng


def test_after_turn_calibrates_and_returns_a_frozen_commit() -> None:
    eng, seen = make_engine()
    chain = build_chain(chatty(2))
    prep = prepare(eng, chain, window=8000)
    record = eng.after_turn(session_id="s_test", turn_id="t1", prep=prep,
                            usage=Usage(input_tokens=999, output_tokens=10),
                            first_call_input_tokens=int(prep.raw_input * 1.5))
    commit = ContextCommit.model_validate(record)
    assert commit.turn_id == "t1" and commit.context_window == 8000
    # the id lists come as ranges of chain positions, read back against the chain
    assert record["keptRanges"] == [[0, len(chain) - 1]] and "kept" not in record
    assert commit.chain_head == chain[-1].id and commit.count("kept") == len(chain)
    assert commit.expanded([n.id for n in chain]).kept == [n.id for n in chain]
    assert commit.path == "none"
    assert abs((commit.calibrated_after or 0) - 1.5) < 0.01
    assert len(commit.messages_digest) == 64 and commit.messages == len(prep.messages)
    with pytest.raises(ValidationError):
        commit.path = "other"  # type: ignore[misc]
    again = prepare(eng, chain, window=8000)
    assert again.calibration == pytest.approx(1.5, rel=0.01)
    assert again.estimate > prep.estimate
    assert not [e for e in seen if e.type == "context.compaction_recommended"]
    big = eng.after_turn(session_id="s_test", turn_id="t2", prep=again, usage=Usage(),
                         first_call_input_tokens=5000)
    assert big["recommendCompaction"] is True
    assert [e for e in seen if e.type == "context.compaction_recommended"]


def test_manual_compaction_summarises_everything() -> None:
    eng, seen = make_engine()
    chain = build_chain(chatty(3), open_last=False)
    cmd = Node(id="cmd", role="user", text="/compact", predecessor=chain[-1].id,
               metadata={"command": "compact"})
    prep = prepare(eng, [*chain, cmd], window=128_000)
    written: list[Node] = []
    new = run(eng.compact_now(prep, summarize=Summariser(),
                              persist=lambda n: written.append(n) or n))
    assert new.path == "manual" and written[0].caller == chain[-1].id
    assert [s.node_id for s in new.segments] == [written[0].id]
    assert [e.payload["path"] for e in seen if e.type == "context.compacted"] == ["manual"]
    # nothing left to compact: no new summary
    again = prepare(eng, [*chain, cmd], window=128_000, summaries=written)
    same = run(eng.compact_now(again, summarize=Summariser(), persist=written.append))
    assert same is again and len(written) == 1


def test_an_oversized_last_message_goes_through_without_a_false_event() -> None:
    eng, seen = make_engine()
    chain = build_chain([Turn("x " * 20_000)])  # one user message far over the window
    prep = prepare(eng, chain, window=8000)
    assert prep.over_window and not eng.worth_compacting(prep)
    assert not eng.should_auto_compact(prep)  # nothing older to fold: no summary call
    summ = Summariser()
    new = run(eng.auto_compact(prep, history=chain, summarize=summ))
    assert new is prep and not summ.requests
    assert new.messages[-1].content == chain[-1].text  # never dropped
    assert not seen


def test_a_slow_summariser_times_out_into_a_structural_summary() -> None:
    eng, _ = make_engine(summarizer_timeout=0.05)
    chain = build_chain(same_file(18))

    async def slow(req: SummaryRequest) -> str:
        await asyncio.sleep(5)
        return "too late"

    new = run(eng.auto_compact(prepare(eng, chain, window=8000), history=chain, summarize=slow))
    assert new.path == "structural" and "TimeoutError" in new.details["summarizer_error"]


def test_cancelling_during_the_summary_cancels_the_turn() -> None:
    eng, seen = make_engine()
    chain = build_chain(same_file(18))
    with pytest.raises(TurnCancelled):
        run(eng.auto_compact(prepare(eng, chain, window=8000), history=chain,
                             summarize=Summariser(TurnCancelled("turn cancelled"))))
    assert not seen


def test_thresholds_come_from_the_environment() -> None:
    def config(env: dict[str, str]) -> ContextConfig:
        return ContextConfig.from_config(load_settings(env=env, user_file=False)
                                         .get(ContextSection))

    cfg = config({"OPENPROGRAM_CONTEXT_AUTO_COMPACT": "0.5",
                  "OPENPROGRAM_CONTEXT_RECOMMEND": "0.4", "OPENPROGRAM_CONTEXT_GAP_SECONDS": "60"})
    assert (cfg.auto_compact_ratio, cfg.recommend_ratio, cfg.gap_threshold_seconds) == \
        (0.5, 0.4, 60.0)
    with pytest.raises(ConfigError, match="OPENPROGRAM_CONTEXT_AUTO_COMPACT"):
        config({"OPENPROGRAM_CONTEXT_AUTO_COMPACT": "lots"})
