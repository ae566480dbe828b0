"""The event bridge: bus events become ``openprogram/event`` payloads (the only place).

Each event is turned into JSON once and handed to ``deliver`` (the host's fan-out), on the
server loop, in bus order, whatever thread emitted it. A turn's stream deltas are joined
(``events.coalesce``: one notification per turn per 16 ms at most); any other event, and any
other message the server writes (``flush``), first sends what is held. Events emitted on
other threads reach the loop in batches: one wake-up for however many arrived meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.events.coalesce import DeltaJoiner
from openprogram_lsp.lsp.dumps import notification

log = logging.getLogger(__name__)

INTERNAL_TYPES = frozenset({"tool.before", "tool.after"})
"""Bus events kept inside the server (gate consultations)."""


def _jsonable(value: Any) -> Any:
    """The value as plain JSON (anything unknown becomes its string)."""
    return json.loads(json.dumps(value, default=str))


class EventBridge:
    """Forwards bus events to the connections, in order, from any thread."""

    def __init__(self, bus: EventBus, deliver: Callable[[Event, dict[str, Any]], Any],
                 loop: asyncio.AbstractEventLoop,
                 listeners: list[Callable[[Event], None]] | None = None) -> None:
        self._bus = bus
        self._deliver = deliver
        self._loop = loop
        self._thread = threading.get_ident()
        self._unsubscribe: Callable[[], None] | None = None
        self.listeners: list[Callable[[Event], None]] = listeners if listeners is not None else []
        self._joiner = DeltaJoiner(loop, self._send)
        self._inbox: list[Event] = []  # emitted on other threads, not yet on the loop
        self._inbox_lock = threading.Lock()

    def start(self) -> None:
        """Subscribe to the bus."""
        if self._unsubscribe is None:
            self._unsubscribe = self._bus.subscribe(self._on_event)

    def stop(self) -> None:
        """Unsubscribe (what is held goes out)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.flush()

    def flush(self) -> None:
        """Send the stream deltas held now (before another message goes out); a no-op off
        the loop's thread."""
        if threading.get_ident() == self._thread:
            self._drain()
            self._joiner.flush()

    def _on_event(self, event: Event) -> None:
        if threading.get_ident() == self._thread:  # (a delta's path: kept short)
            if self._inbox:
                self._drain()
            self._joiner.push(event)
            return
        with self._inbox_lock:
            self._inbox.append(event)
            if len(self._inbox) > 1:
                return  # a drain is already on its way
        if not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._inbox_lock:
            events, self._inbox = self._inbox, []
        for event in events:
            self._joiner.push(event)

    def _send(self, event: Event) -> None:
        if event.type in INTERNAL_TYPES:
            return
        try:
            self._deliver(event, _jsonable(notification(event)))
        except Exception:
            log.exception("could not forward %s", event.type)
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed on %s", event.type)
