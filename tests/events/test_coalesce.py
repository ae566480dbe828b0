"""Stream deltas joined for a transport: the exact text, in order, one event per interval."""

from __future__ import annotations

import asyncio
import random

from openprogram_lsp.events.bus import Event, make_event
from openprogram_lsp.events.coalesce import DeltaJoiner


def _delta(text: str, turn: str = "t", type: str = "text.delta") -> Event:
    return make_event(type, {"text": text}, session_id="s", turn_id=turn)


async def test_deltas_join_and_other_events_flush_first() -> None:
    out: list[Event] = []
    joiner = DeltaJoiner(asyncio.get_running_loop(), out.append, interval=10)
    for piece in ("Hel", "lo, ", "wörld"):
        joiner.push(_delta(piece))
    assert out == []  # held
    started = make_event("tool.started", {"name": "x"}, session_id="s", turn_id="t")
    joiner.push(started)
    joiner.push(_delta("after"))
    joiner.flush()
    assert [(e.type, e.payload) for e in out] == [
        ("text.delta", {"text": "Hello, wörld"}), ("tool.started", {"name": "x"}),
        ("text.delta", {"text": "after"})]
    assert out[1] is started


async def test_the_interval_sends_what_is_held() -> None:
    out: list[Event] = []
    joiner = DeltaJoiner(asyncio.get_running_loop(), out.append, interval=0.01)
    joiner.push(_delta("a"))
    joiner.push(_delta("b"))
    for _ in range(200):
        if out:
            break
        await asyncio.sleep(0.01)
    assert [e.payload["text"] for e in out] == ["ab"]
    assert joiner.held == 0


async def test_thought_and_text_keep_their_interleaving() -> None:
    out: list[Event] = []
    joiner = DeltaJoiner(asyncio.get_running_loop(), out.append, interval=10)
    for type, text in (("thought.delta", "hmm "), ("thought.delta", "so"),
                       ("text.delta", "Yes"), ("text.delta", "."), ("thought.delta", "!")):
        joiner.push(_delta(text, type=type))
    joiner.flush()
    assert [(e.type, e.payload["text"]) for e in out] == [
        ("thought.delta", "hmm so"), ("text.delta", "Yes."), ("thought.delta", "!")]


async def test_turns_are_held_apart_and_a_long_run_goes_at_once() -> None:
    out: list[Event] = []
    joiner = DeltaJoiner(asyncio.get_running_loop(), out.append, interval=10, max_chars=10)
    joiner.push(_delta("a1", "A"))
    joiner.push(_delta("b1", "B"))
    joiner.push(_delta("a2", "A"))
    assert out == []
    joiner.push(_delta("x" * 8, "B"))  # B reaches 10 characters: everything held goes
    assert [(e.turn_id, e.payload["text"]) for e in out] == [("A", "a1a2"), ("B", "b1" + "x" * 8)]


async def test_deltas_with_more_than_text_are_not_joined() -> None:
    out: list[Event] = []
    joiner = DeltaJoiner(asyncio.get_running_loop(), out.append, interval=10)
    joiner.push(_delta("a"))
    odd = make_event("thought.delta", {"text": "b", "signature": "sig"}, session_id="s",
                     turn_id="t")
    joiner.push(odd)
    joiner.push(make_event("text.delta", {"text": 3}, session_id="s", turn_id="t"))
    assert [e.payload for e in out] == [{"text": "a"}, odd.payload, {"text": 3}]


async def test_random_streams_keep_every_character_and_the_order() -> None:
    rng = random.Random(7)
    out: list[Event] = []
    joiner = DeltaJoiner(asyncio.get_running_loop(), out.append, interval=10,
                         max_chars=rng.randint(5, 50))
    sent: list[tuple[str, str, str]] = []
    for _ in range(2000):
        turn = rng.choice("AB")
        roll = rng.random()
        if roll < 0.05:
            ev = make_event("tool.started", {"n": len(sent)}, session_id="s", turn_id=turn)
            sent.append((turn, "tool.started", str(len(sent))))
        else:
            type = "text.delta" if roll < 0.8 else "thought.delta"
            text = "".join(rng.choice("ab\né💡 ") for _ in range(rng.randint(0, 6)))
            ev = _delta(text, turn, type)
            sent.append((turn, type, text))
        joiner.push(ev)
    joiner.flush()
    assert len(out) < len(sent)

    def per_turn(items: list[tuple[str, str, str]], turn: str) -> list[tuple[str, str]]:
        merged: list[tuple[str, str]] = []
        for t, type, text in items:
            if t != turn:
                continue
            if merged and type.endswith(".delta") and merged[-1][0] == type:
                merged[-1] = (type, merged[-1][1] + text)
            else:
                merged.append((type, text))
        return merged

    got = [(e.turn_id or "", e.type,
            str(e.payload["n"]) if e.type == "tool.started" else e.payload["text"])
           for e in out]
    for turn in "AB":
        assert per_turn(got, turn) == per_turn(sent, turn)

    def segments(items: list[tuple[str, str, str]]) -> list[list[tuple[str, str, str]]]:
        parts: list[list[tuple[str, str, str]]] = [[]]
        for item in items:
            parts[-1].append(item)
            if item[1] == "tool.started":
                parts.append([])
        return parts

    # across turns too: no event overtakes a delta of any turn pushed before it
    for got_part, sent_part in zip(segments(got), segments(sent), strict=True):
        for turn in "AB":
            assert per_turn(got_part, turn) == per_turn(sent_part, turn)
