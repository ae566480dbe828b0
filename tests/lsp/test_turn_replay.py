"""The running turns' notifications kept for late subscribers: joined, capped, dropped."""

from __future__ import annotations

from typing import Any

from openprogram_lsp.lsp import turn_replay
from openprogram_lsp.lsp.turn_replay import TurnReplay


def _event(kind: str, data: dict[str, Any], turn: str = "t1") -> dict[str, Any]:
    return {"type": kind, "sessionId": "s", "turnId": turn, "data": data}


def _feed(replay: TurnReplay, kind: str, data: dict[str, Any], turn: str = "t1") -> None:
    replay.record("s", turn, kind, _event(kind, data, turn))


def test_deltas_are_joined_per_kind_and_call_and_a_finished_turn_is_dropped() -> None:
    replay = TurnReplay()
    _feed(replay, "text.delta", {"text": "before the turn"})  # not a running turn: ignored
    _feed(replay, "turn.started", {"text": "go"})
    for piece in ("Wri", "ting", "."):
        _feed(replay, "text.delta", {"text": piece})
    _feed(replay, "tool.started", {"toolCallId": "c1"})
    _feed(replay, "tool.output", {"toolCallId": "c1", "text": "a\n"})
    _feed(replay, "tool.output", {"toolCallId": "c1", "text": "b\n"})
    sent = _event("text.delta", {"text": "!"})
    replay.record("s", "t1", "text.delta", sent)
    out = replay.of_session("s")
    assert [(e["type"], e["data"].get("text")) for e in out] == [
        ("turn.started", "go"), ("text.delta", "Writing."), ("tool.started", None),
        ("tool.output", "a\nb\n"), ("text.delta", "!")]
    assert all(e["replayed"] for e in out) and "replayed" not in sent  # sent ones untouched
    _feed(replay, "text.delta", {"text": "?"})
    assert sent["data"] == {"text": "!"}
    assert replay.of_session("other") == []
    _feed(replay, "turn.finished", {"status": "done"})
    assert replay.of_session("s") == []


def test_stream_text_past_the_cap_is_left_out_and_said(monkeypatch: Any) -> None:
    monkeypatch.setattr(turn_replay, "MAX_BYTES", 10)
    replay = TurnReplay()
    _feed(replay, "turn.started", {"text": "go"})
    _feed(replay, "text.delta", {"text": "12345678"})
    _feed(replay, "text.delta", {"text": "too long"})
    _feed(replay, "tool.started", {"toolCallId": "c1"})
    out = replay.of_session("s")
    assert [e["type"] for e in out] == ["turn.started", "text.delta", "tool.started"]
    assert out[0]["replayTruncated"] is True and out[1]["data"]["text"] == "12345678"


def test_a_running_subagent_outlives_the_turn_that_spawned_it_in_the_replay() -> None:
    replay = TurnReplay()
    _feed(replay, "turn.started", {"text": "spawn a helper"})
    _feed(replay, "subagent.started", {"agentId": "ag1", "label": "tests"})
    _feed(replay, "turn.finished", {"status": "done"})  # agent returned at once
    _feed(replay, "turn.started", {"agentId": "ag1", "source": "agent_spawn"}, "c1")
    _feed(replay, "text.delta", {"text": "Running"}, "c1")
    out = replay.of_session("s")
    assert [(e["type"], e["turnId"]) for e in out] == [
        ("subagent.started", "t1"), ("turn.started", "c1"), ("text.delta", "c1")]
    assert all(e["replayed"] for e in out)
    # while the spawning turn runs, its own events carry the subagent (not sent twice)
    replay2 = TurnReplay()
    _feed(replay2, "turn.started", {"text": "spawn"})
    _feed(replay2, "subagent.started", {"agentId": "ag1", "label": "tests"})
    assert [e["type"] for e in replay2.of_session("s")] == ["turn.started", "subagent.started"]
    # an ended subagent is not replayed
    _feed(replay, "subagent.ended", {"agentId": "ag1", "status": "done"}, "c1")
    _feed(replay, "turn.finished", {"status": "done"}, "c1")
    assert replay.of_session("s") == []
