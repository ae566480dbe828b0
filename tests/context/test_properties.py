"""Property tests over random conversations: order, pairing, last message, budget, purity."""

from __future__ import annotations

import asyncio
import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.context.convo import Call, Turn, build_chain, chain_order, check_pairing, prepare

from openprogram_lsp.context.budget import Calibration
from openprogram_lsp.context.commit import ContextCommit, messages_digest, replay
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.context.types import ContextConfig, SummaryRequest, TurnPrep
from openprogram_lsp.core.types import Node, Usage
from openprogram_lsp.events.bus import EventBus

PATHS = [f"pkg/mod_{i}.py" for i in range(60)]
WORDS = ["fix", "the", "bug", "in", "please", "add", "tests", "for", "refactor", "function",
         "parse_config", "pkg/mod_1.py", "mod_2.py", "now", "why"]


def _count(rng: random.Random, most: int) -> int:
    """1 to ``most``, the ends as often as Hypothesis's own integers draw them."""
    roll = rng.random()
    return 1 if roll < 0.1 else most if roll < 0.2 else rng.randint(1, most)


def _text(rng: random.Random, max_words: int) -> str:
    return " ".join(rng.choices(WORDS, k=_count(rng, max_words)))


def output(n: int) -> str:
    return f"def handler_{n}(x):\n" + "    value = x + 1\n" * (n // 18)


def _size(rng: random.Random) -> int:
    """An output's size: mostly small, often large, and the empty and largest outputs."""
    roll = rng.random()
    return (0 if roll < 0.1 else 3000 if roll < 0.2 else rng.randint(0, 400) if roll < 0.6
            else rng.randint(0, 3000))


def _turn(seed: int, gap: float, status: str) -> Turn:
    """A turn's texts, steps and tool calls from one seed: drawing each of them from Hypothesis
    (about twenty draws a turn) was most of these tests' time. The gap and status, which pick
    the idle and error paths, stay Hypothesis's draws, and so does the number of turns."""
    rng = random.Random(seed)
    steps = [(_text(rng, 30), [Call(path=rng.choice(PATHS), output=output(_size(rng)),
                                    failed=rng.random() < 0.5)
                               for _ in range(rng.choice((0, 0, 1, 1, 2)))])
             for _ in range(rng.choice((1, 1, 2, 3)))]
    return Turn(user=_text(rng, 60), steps=steps, gap=gap, status=status)


turns = st.builds(_turn, st.integers(0, 2**32 - 1), gap=st.sampled_from([5.0, 30.0, 4000.0]),
                  status=st.sampled_from(["done", "done", "done", "error", "cancelled"]))
# Left to itself Hypothesis keeps a list short: 144 of 150 conversations had under ten turns
# and 15 of 150 reached compaction. Half are drawn at a length of 10 to 30 turns instead
# (then 95-115 of 150 compact, 7-15 of them by snipping; with every part of a turn drawn by
# Hypothesis it was 60-100, 0-4).
conversations = st.one_of(
    st.lists(turns, min_size=1, max_size=40),
    st.integers(10, 30).flatmap(lambda n: st.lists(turns, min_size=n, max_size=n)))
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def engine(snip_max_ratio: float = 0.25) -> ContextEngine:
    return ContextEngine(config=ContextConfig(microcompact_min_tokens=100,
                                              snip_max_ratio=snip_max_ratio),
                         calibration=Calibration(), bus=EventBus())


def assert_replays(eng: ContextEngine, prep: TurnPrep, nodes: list[Node]) -> None:
    """The ContextCommit and the stored nodes give back exactly the messages sent."""
    commit = ContextCommit.model_validate(
        eng.after_turn(session_id="s", turn_id="t", prep=prep, usage=Usage()))
    again = replay(commit, {n.id: n for n in nodes})
    assert messages_digest(again) == commit.messages_digest


@SETTINGS
@given(conversations)
def test_prepare_keeps_order_pairs_calls_and_ends_with_the_user(convo: list[Turn]) -> None:
    chain = build_chain(convo)
    prep = prepare(engine(), chain)
    check_pairing(prep.messages)
    order = chain_order(prep, chain)
    assert order == sorted(order)
    assert prep.messages[-1].role == "user" and prep.messages[-1].content == chain[-1].text


@SETTINGS
@given(conversations, st.integers(0, 5), st.booleans(), st.sampled_from([3000, 4000, 8000]),
       st.sampled_from([0.25, 1.0]))
def test_auto_compaction_ends_under_budget_with_order_and_pairs(
        convo: list[Turn], summary_words: int, fail: bool, window: int, cap: float) -> None:
    chain = build_chain(convo)
    eng = engine(cap)
    written = []

    async def summarize(req: SummaryRequest) -> str:
        if fail:
            raise RuntimeError("model down")
        return "Summary: " + "word " * (summary_words * 400)

    prep = prepare(eng, chain, window=window)
    if not eng.should_auto_compact(prep):
        return
    new = asyncio.run(eng.auto_compact(prep, history=chain, summarize=summarize,
                                       persist=lambda n: written.append(n) or n))
    assert not eng.should_auto_compact(new), (new.path, new.usage_ratio)
    check_pairing(new.messages)
    order = chain_order(new, chain)
    assert order == sorted(order)
    assert new.messages[-1].role == "user" and new.messages[-1].content == chain[-1].text
    assert new.path in ("snip", "compact", "structural")
    assert_replays(eng, new, [*chain, *written])
    if new.path != "snip":
        assert len(written) == 1 and written[0].id == new.summary_node_id
        assert written[0].role == "summary" and written[0].predecessor is None
        covered = set(written[0].metadata["covers"])
        assert chain[-1].id not in covered
        assert not covered & {s.node_id for s in new.segments}
        # the summary applies on the next prepare of the same chain
        again = prepare(eng, chain, window=window, summaries=written)
        assert again.summary_node_id == written[0].id
        assert (new.path == "structural") == fail


@SETTINGS
@given(conversations, st.booleans())
def test_microcompact_never_changes_the_nodes(convo: list[Turn], idle_now: bool) -> None:
    chain = build_chain(convo)
    before = copy.deepcopy([n.model_dump() for n in chain])
    eng = engine()
    last = chain[-2].metadata.get("finishedAt") if len(chain) > 1 else None
    prep = prepare(eng, chain, last_turn_at=last if idle_now else None)
    assert [n.model_dump() for n in chain] == before
    check_pairing(prep.messages)
    tool_msgs = [m for m in prep.messages if m.role == "tool"]
    # the five most recent results are never cleared
    assert not any(m.content.startswith("[Old tool result cleared") for m in tool_msgs[-5:])
    cleared = sum(m.content.startswith("[Old tool result cleared") for m in tool_msgs)
    assert cleared == len(prep.replaced)
    assert_replays(eng, prep, chain)
    if idle_now and len(chain) > 1:
        assert prep.path == "microcompact" or not prep.replaced or "microcompact" in prep.actions
