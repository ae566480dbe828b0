import asyncio
import logging

import pytest

from openprogram_lsp.core.turn_context import current_session_id, current_turn_id
from openprogram_lsp.events.bus import Event, EventBus, emit_safe, make_event


def test_typed_and_all_subscribers_receive_matching_events() -> None:
    bus = EventBus()
    typed: list[str] = []
    everything: list[str] = []
    bus.subscribe(lambda e: typed.append(e.type), types=["a"])
    bus.subscribe(lambda e: everything.append(e.type))
    bus.emit(Event("a"))
    bus.emit(Event("b"))
    assert typed == ["a"]
    assert everything == ["a", "b"]


def test_raising_handler_never_reaches_emitter(caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    after: list[str] = []

    def boom(e: Event) -> None:
        raise RuntimeError("handler bug")

    bus.subscribe(boom)
    bus.subscribe(lambda e: after.append(e.type))
    with caplog.at_level(logging.ERROR):
        bus.emit(Event("x"))
    assert after == ["x"]
    assert "handler bug" in caplog.text


def test_unsubscribe_stops_delivery() -> None:
    bus = EventBus()
    seen: list[Event] = []
    unsub = bus.subscribe(seen.append)
    unsub()
    bus.emit(Event("x"))
    assert seen == [] and bus.subscriber_count == 0


def test_async_handler_skipped_without_loop() -> None:
    bus = EventBus()
    seen: list[Event] = []

    async def handler(e: Event) -> None:
        seen.append(e)

    bus.subscribe(handler)
    bus.emit(Event("x"))  # no running loop: skipped, no crash
    assert seen == []


async def test_async_handler_scheduled_on_running_loop() -> None:
    bus = EventBus()
    seen: list[str] = []

    async def handler(e: Event) -> None:
        seen.append(e.type)

    async def failing(e: Event) -> None:
        raise ValueError("async bug")

    bus.subscribe(handler)
    bus.subscribe(failing)
    bus.emit(Event("x"))
    for _ in range(10):
        await asyncio.sleep(0)
    assert seen == ["x"]


def test_make_event_reads_turn_context_vars() -> None:
    t1 = current_session_id.set("s1")
    t2 = current_turn_id.set("t1")
    try:
        ev = make_event("tool.before", {"a": 1})
    finally:
        current_session_id.reset(t1)
        current_turn_id.reset(t2)
    assert (ev.session_id, ev.turn_id, ev.payload) == ("s1", "t1", {"a": 1})
    assert ev.id and ev.time > 0


def test_emit_safe_swallows_everything() -> None:
    class Broken(EventBus):
        def emit(self, event: Event) -> None:
            raise RuntimeError("bus down")

    emit_safe("x", bus=Broken())  # must not raise
