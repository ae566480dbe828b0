"""Compaction with headroom: down to the target, a cooldown between compactions, bounded
calibration; long sessions through the real dispatcher against a loopback OpenAI-compatible
server (one reporting honest usage, one reporting ``prompt_tokens: 100`` on every call)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.context.agent_server import (
    AnthropicSessionModel,
    SessionModel,
    request_estimate,
    request_tokens,
    user_text,
    write_workspace,
)
from tests.context.convo import Turn, build_chain, prepare
from tests.providers.loopback import LoopbackServer

from openprogram_lsp.config import load_settings
from openprogram_lsp.context.budget import RATIO_MIN, Calibration
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.context.types import ContextConfig, SummaryRequest
from openprogram_lsp.core.types import Node, TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from openprogram_lsp.providers.http import aclose_shared_client

FILLER = "lorem ipsum dolor sit amet " * 40  # ~270 tokens
AT_80 = ContextConfig(auto_compact_ratio=0.8)  # the chains below are sized for 80%


def turns(n: int) -> list[Turn]:
    return [Turn(f"question {i}: {FILLER}", steps=[(f"answer {i}: {FILLER}", [])])
            for i in range(n)]


async def summarize(req: SummaryRequest) -> str:
    return "The user asked numbered questions; each was answered."


def compact(eng: ContextEngine, chain: list[Node], window: int,
            summaries: list[Node]) -> tuple[object, list[Node]]:
    """Prepare the chain; compact when the engine says so. The prep and new summaries."""
    prep = prepare(eng, chain, window=window, summaries=summaries)
    written: list[Node] = []
    if eng.should_auto_compact(prep):
        prep = asyncio.run(eng.auto_compact(prep, history=chain, summarize=summarize,
                                            persist=lambda n: written.append(n) or n))
    return prep, written


def test_compaction_goes_down_to_the_target_and_records_its_turn() -> None:
    eng = ContextEngine(config=AT_80, calibration=Calibration())
    chain = build_chain([*turns(24), Turn("next question")])
    before = prepare(eng, chain, window=16_000)
    assert eng.should_auto_compact(before)
    prep, [summary] = compact(eng, chain, 16_000, [])
    assert prep.path == "compact"  # type: ignore[attr-defined]
    assert prep.estimate <= 0.5 * 16_000 < before.estimate  # type: ignore[attr-defined]
    assert summary.metadata["compactedAt"] == chain[-1].id


def test_no_second_compaction_within_the_cooldown_unless_over_the_window() -> None:
    eng = ContextEngine(config=AT_80, calibration=Calibration())
    history = [*turns(24), Turn("q24", steps=[("a", [])])]
    chain = build_chain([*history, Turn("q25")])
    _, summaries = compact(eng, chain, 16_000, [])
    assert summaries
    # two more big turns (u25 is the compacting turn's position): over the threshold again,
    # but only two turns after the compaction
    history += [Turn(f"more {i}: {FILLER * 8}", steps=[(f"ok {FILLER * 8}", [])])
                for i in range(2)]
    chain = build_chain([*history, Turn("q27")])
    prep = prepare(eng, chain, window=16_000, summaries=summaries)
    assert prep.usage_ratio >= 0.8 and not prep.over_window, prep.usage_ratio
    assert eng.turns_since_compaction(prep) == 2 and eng.cooling_down(prep)
    assert not eng.should_auto_compact(prep)  # the request still fits: no summary call
    same = asyncio.run(eng.auto_compact(prep, history=chain, summarize=summarize))
    assert same is prep
    # a third: the request would not fit the window at all, so it compacts at once
    history.append(Turn(f"huge {FILLER * 12}", steps=[(f"ok {FILLER * 6}", [])]))
    chain = build_chain([*history, Turn("q28")])
    prep = prepare(eng, chain, window=16_000, summaries=summaries)
    assert prep.over_window and eng.cooling_down(prep)
    assert eng.should_auto_compact(prep)
    new, more = compact(eng, chain, 16_000, summaries)
    assert more and new.estimate <= 16_000  # type: ignore[attr-defined]
    # past the cooldown, the threshold alone decides again
    history = [*history, *(Turn(f"q{i} {FILLER}", steps=[("a", [])]) for i in range(4))]
    chain = build_chain([*history, Turn("q33")])
    prep = prepare(eng, chain, window=16_000, summaries=[*summaries, *more])
    assert not eng.cooling_down(prep)


def test_cooldown_setting() -> None:
    eng = ContextEngine(config=ContextConfig(auto_compact_ratio=0.8, cooldown_turns=0),
                        calibration=Calibration())
    chain = build_chain([*turns(24), Turn("q")])
    _, summaries = compact(eng, chain, 16_000, [])
    chain = build_chain([*turns(24), Turn("q", steps=[(FILLER * 30, [])]), Turn("q2")])
    prep = prepare(eng, chain, window=16_000, summaries=summaries)
    assert prep.usage_ratio >= 0.8 and not eng.cooling_down(prep)
    assert eng.should_auto_compact(prep)


def test_a_summary_made_before_it_recorded_its_turn_is_no_cooldown() -> None:
    eng = ContextEngine(config=AT_80, calibration=Calibration())
    chain = build_chain([*turns(24), Turn("q")])
    _, [summary] = compact(eng, chain, 16_000, [])
    old = summary.model_copy(update={"metadata": {
        k: v for k, v in summary.metadata.items() if k != "compactedAt"}})
    prep = prepare(eng, chain, window=16_000, summaries=[old])
    assert eng.turns_since_compaction(prep) is None and not eng.cooling_down(prep)


def test_suspect_usage_is_ignored_and_the_ratio_is_bounded(tmp_path: Path) -> None:
    cal = Calibration(tmp_path / "cal.json")
    for _ in range(20):
        assert cal.observe("m", 3000, 100) == 1.0  # a server reporting 100 on every call
    assert cal.suspect["m"] == 20 and cal.samples("m") == 0
    for _ in range(40):
        cal.observe("m", 1000, 600)  # plausible-looking but lower than any tokenizer
    assert cal.ratio("m") == pytest.approx(RATIO_MIN)
    # a calibration file written before the bounds holds 0.25: read within them
    (tmp_path / "old.json").write_text('{"m": {"ratio": 0.25, "samples": 30}}')
    assert Calibration(tmp_path / "old.json").ratio("m") == RATIO_MIN


# -- whole sessions through the dispatcher ------------------------------------------------------


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    srv = LoopbackServer().start()
    try:
        yield srv
    finally:
        srv.stop()


def dispatcher_for(make_dispatcher: Callable[..., Dispatcher], server: LoopbackServer,
                   workspace: Path, window: int, monkeypatch: pytest.MonkeyPatch) -> Dispatcher:
    write_workspace(workspace)
    env = {"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "sk-test",
           "OPENPROGRAM_CONTEXT_WINDOW": str(window)}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return make_dispatcher("openai:gpt-test", permission_mode="bypass",
                           settings=load_settings(env=env, user_file=False))


async def run_session(d: Dispatcher, n: int, events: list[Event]) -> list[int]:
    """Run ``n`` turns; the turns at which a context.compacted event came."""
    at: list[int] = []
    sid: str | None = None
    try:
        for t in range(n):
            seen = len(events)
            r = await d.run_turn(TurnRequest(text=user_text(t), session_id=sid))
            assert r.status == "done", r.error
            sid = r.session_id
            if any(e.type == "context.compacted" for e in events[seen:]):
                at.append(t)
    finally:
        await aclose_shared_client()
    return at


async def test_a_long_session_compacts_with_headroom(
        make_dispatcher: Callable[..., Dispatcher], server: LoopbackServer, workspace: Path,
        events: list[Event], monkeypatch: pytest.MonkeyPatch) -> None:
    model = SessionModel(server).install()
    # 24,000 tokens: the tool schemas, prompt and output reserve take a third, so a
    # compaction can reach the 50% target (bench_compaction shows 16,000)
    d = dispatcher_for(make_dispatcher, server, workspace, 24_000, monkeypatch)
    at = await run_session(d, 60, events)
    compacted = [e for e in events if e.type == "context.compacted"]
    assert compacted and all(e.payload["path"] == "compact" for e in compacted)
    assert all(e.payload["tokens_after"] <= 12_000 for e in compacted), compacted
    gaps = [b - a for a, b in itertools.pairwise(at)]
    assert len(at) >= 2 and min(gaps) >= 4, at  # never within the cooldown
    assert model.summaries >= len(at)  # a summary call (or two, in chunks) each
    assert max(request_tokens(b) for b in model.requests) <= 24_000


async def test_a_server_reporting_tiny_usage_never_gets_a_request_over_the_window(
        make_dispatcher: Callable[..., Dispatcher], server: LoopbackServer, workspace: Path,
        events: list[Event], monkeypatch: pytest.MonkeyPatch) -> None:
    model = SessionModel(server, reported_prompt_tokens=100).install()
    # (before: the calibration fell to 0.25 and requests grew to four windows)
    d = dispatcher_for(make_dispatcher, server, workspace, 10_000, monkeypatch)
    at = await run_session(d, 24, events)
    # by the estimator's count every request fits; counted as JSON bytes / 4 (keys and quotes
    # too) within 10%
    sizes = [request_estimate(b) for b in model.requests]
    assert len(sizes) >= 48 and max(sizes) <= 10_000, sizes
    assert max(request_tokens(b) for b in model.requests) <= 11_000
    assert at, "the session outgrew the window: it must have compacted"
    cal = d.services.context.calibration
    assert cal.ratio("gpt-test") == 1.0 and cal.suspect["gpt-test"] >= 20


async def test_a_thinking_model_s_summaries_are_asked_without_thinking(
        make_dispatcher: Callable[..., Dispatcher], server: LoopbackServer, workspace: Path,
        events: list[Event], monkeypatch: pytest.MonkeyPatch) -> None:
    """A summary has a few hundred output tokens: a thinking budget of 8,000 would exceed them
    (the API refuses a budget over max_tokens) or eat them; so the summariser asks without."""
    model = AnthropicSessionModel(server).install()
    write_workspace(workspace)
    env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test",
           "OPENPROGRAM_CONTEXT_WINDOW": "16000"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    d = make_dispatcher("anthropic:claude-sonnet-4-5", permission_mode="bypass",
                        settings=load_settings(env=env, user_file=False))
    at = await run_session(d, 16, events)
    assert at, "the session must have compacted"
    assert [e.payload["path"] for e in events if e.type == "context.compacted"] == ["compact"]
    turns = [r for r in server.received if r.json.get("tools")]
    summaries = [r for r in server.received if not r.json.get("tools")]
    assert summaries and len(summaries) == model.summaries
    assert all(r.json["thinking"] == {"type": "enabled", "budget_tokens": 8_000}
               and r.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
               for r in turns)
    assert all("thinking" not in r.json and "anthropic-beta" not in r.headers
               for r in summaries)
    assert all(r.json["max_tokens"] < 8_000 for r in summaries)
