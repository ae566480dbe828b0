"""The event bridge: order kept across threads, internal events kept inside, JSON-safe payloads."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from openprogram_lsp.events.bus import EventBus, make_event
from openprogram_lsp.lsp.bridge import EventBridge


async def test_events_from_threads_keep_their_order_and_deltas_join() -> None:
    bus = EventBus()
    sent: list[tuple[str, Any]] = []
    bridge = EventBridge(bus, lambda e, p: sent.append(("openprogram/event", p)),
                         asyncio.get_running_loop())
    bridge.start()

    def worker() -> None:
        for i in range(50):
            bus.emit(make_event("text.delta", {"text": str(i)}, session_id="s", turn_id="t"))
        bus.emit(make_event("turn.finished", {"status": "done"}, session_id="s", turn_id="t"))

    thread = threading.Thread(target=worker)
    thread.start()
    await asyncio.to_thread(thread.join)
    for _ in range(100):
        if sent and sent[-1][1]["type"] == "turn.finished":
            break
        await asyncio.sleep(0.01)
    bridge.stop()
    deltas = [p["data"]["text"] for _, p in sent[:-1]]
    assert all(p["type"] == "text.delta" for _, p in sent[:-1])
    assert "".join(deltas) == "".join(str(i) for i in range(50))
    assert len(deltas) < 50  # batched: one wake-up of the loop and one event per interval
    assert sent[-1] == ("openprogram/event", {"type": "turn.finished", "sessionId": "s",
                                              "turnId": "t", "data": {"status": "done"}})


async def test_internal_events_stay_and_payloads_are_json() -> None:
    bus = EventBus()
    sent: list[Any] = []
    bridge = EventBridge(bus, lambda e, p: sent.append(p), asyncio.get_running_loop())
    bridge.start()
    bus.emit(make_event("tool.before", {"x": 1}, session_id="s"))
    bus.emit(make_event("file.changed", {"root": Path("/w"), "changes": []}, session_id=None,
                        turn_id=None))
    bridge.stop()
    bus.emit(make_event("text.delta", {"text": "after stop"}, session_id="s"))
    assert sent == [{"type": "file.changed", "sessionId": None,
                     "data": {"root": "/w", "changes": []}}]


async def test_a_flush_sends_held_deltas_before_another_message() -> None:
    bus = EventBus()
    sent: list[Any] = []
    bridge = EventBridge(bus, lambda e, p: sent.append(p), asyncio.get_running_loop())
    bridge.start()
    bus.emit(make_event("text.delta", {"text": "held "}, session_id="s", turn_id="t"))
    bus.emit(make_event("text.delta", {"text": "text"}, session_id="s", turn_id="t"))
    assert sent == []
    bridge.flush()  # what the protocol does before it writes a response or a request
    assert [p["data"] for p in sent] == [{"text": "held text"}]
    bridge.stop()
