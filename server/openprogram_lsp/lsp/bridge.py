"""The event bridge: bus events become ``openprogram/event`` payloads (the only place).

Each event is turned into JSON once and handed to ``deliver`` (the host's fan-out), on the
server loop, in bus order, whatever thread emitted it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from openprogram_lsp.events.bus import Event, EventBus
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

    def start(self) -> None:
        """Subscribe to the bus."""
        if self._unsubscribe is None:
            self._unsubscribe = self._bus.subscribe(self._on_event)

    def stop(self) -> None:
        """Unsubscribe."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _on_event(self, event: Event) -> None:
        if event.type in INTERNAL_TYPES:
            return
        if threading.get_ident() == self._thread:
            self._send(event)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._send, event)

    def _send(self, event: Event) -> None:
        try:
            self._deliver(event, _jsonable(notification(event)))
        except Exception:
            log.exception("could not forward %s", event.type)
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed on %s", event.type)
