"""The event bridge: bus events become ``openprogram/event`` notifications (the only place)."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.lsp import methods

log = logging.getLogger(__name__)

INTERNAL_TYPES = frozenset({"tool.before", "tool.after"})
"""Bus events kept inside the server (gate consultations)."""


def _jsonable(value: Any) -> Any:
    """The value as plain JSON (anything unknown becomes its string)."""
    return json.loads(json.dumps(value, default=str))


class EventBridge:
    """Forwards bus events to the client, in order, from any thread."""

    def __init__(self, bus: EventBus, notify: Callable[[str, Any], None],
                 loop: asyncio.AbstractEventLoop) -> None:
        self._bus = bus
        self._notify = notify
        self._loop = loop
        self._thread = threading.get_ident()
        self._unsubscribe: Callable[[], None] | None = None
        self.listeners: list[Callable[[Event], None]] = []

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
            self._notify(methods.EVENT, _jsonable(event.wire()))
        except Exception:
            log.exception("could not forward %s", event.type)
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed on %s", event.type)
