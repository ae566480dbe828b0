"""Stream deltas joined for a transport: one event per turn per short interval, order kept.

A model streams its reply in many small deltas (``text.delta``, ``thought.delta``); sending
each as its own notification costs a serialisation and a write apiece. ``DeltaJoiner`` holds
the deltas of a turn for at most ``interval`` seconds (or ``max_chars`` characters) and
delivers them as one event of the same type whose ``text`` is theirs joined, with the first
delta's id, time, session and turn. Any other event first delivers what is held, so nothing
overtakes text sent before it; a delta of the other stream type of the same turn does too (a
turn's thought and text keep their interleaving). Deltas of different turns are held apart
(each turn's own order is what a reader of that turn sees). Used on one event loop's thread.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

from openprogram_lsp.events.bus import Event

STREAM_TYPES = frozenset({"text.delta", "thought.delta"})
INTERVAL = 0.016  # seconds a delta may wait for more of its stream
MAX_CHARS = 64 * 1024  # a run this long goes out at once


class _Run:
    """The deltas of one turn's stream held so far."""

    __slots__ = ("chars", "first", "parts")

    def __init__(self, first: Event, text: str) -> None:
        self.first = first
        self.parts = [text]
        self.chars = len(text)

    def event(self) -> Event:
        if len(self.parts) == 1:
            return self.first
        return dataclasses.replace(self.first, payload={"text": "".join(self.parts)})


class DeltaJoiner:
    """Delivers events in order, stream deltas of a turn joined per ``interval``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, deliver: Callable[[Event], None], *,
                 interval: float = INTERVAL, max_chars: int = MAX_CHARS) -> None:
        self._loop = loop
        self._deliver = deliver
        self._interval = interval
        self._max_chars = max_chars
        self._runs: dict[tuple[str | None, str | None], _Run] = {}
        self._timer: asyncio.TimerHandle | None = None

    @property
    def held(self) -> int:
        """How many turns' deltas wait to go out."""
        return len(self._runs)

    def push(self, event: Event) -> None:
        """Take one event: a delta may wait (at most ``interval``), anything else goes now,
        after every delta held."""
        if event.type in STREAM_TYPES:
            payload = event.payload
            text = payload.get("text")
            if type(text) is str and len(payload) == 1:  # plain text: joinable
                key = (event.session_id, event.turn_id)
                run = self._runs.get(key)
                if run is not None and run.first.type == event.type:
                    run.parts.append(text)
                    run.chars += len(text)
                    if run.chars >= self._max_chars:
                        self.flush()
                    return
                if run is not None:
                    self.flush()  # text after thought (or back): keep their order
                self._runs[key] = _Run(event, text)
                if self._timer is None:
                    self._timer = self._loop.call_later(self._interval, self._due)
                return
        self.flush()
        self._deliver(event)

    def flush(self) -> None:
        """Deliver every delta held, in the order their runs began."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._runs:
            return
        runs = list(self._runs.values())
        self._runs.clear()
        for run in runs:
            self._deliver(run.event())

    def _due(self) -> None:
        self._timer = None
        self.flush()
