"""The event bridge: order kept across threads, internal events kept inside, JSON-safe payloads."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from openprogram_lsp.events.bus import EventBus, make_event
from openprogram_lsp.lsp.bridge import EventBridge


async def test_events_from_threads_keep_their_order() -> None:
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
        if len(sent) == 51:
            break
        await asyncio.sleep(0.01)
    bridge.stop()
    assert [p["data"].get("text") for _, p in sent[:50]] == [str(i) for i in range(50)]
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
