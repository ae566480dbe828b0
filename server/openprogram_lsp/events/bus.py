"""A fire-and-forget event bus (one per runtime, built by ``app``).

A handler that raises never reaches the emitter (it is logged); async handlers are scheduled on
the running loop, or skipped when none runs.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from openprogram_lsp.core.ids import new_id
from openprogram_lsp.core.turn_context import current_session_id, current_turn_id

log = logging.getLogger(__name__)

Handler = Callable[["Event"], None] | Callable[["Event"], Awaitable[None]]


_serial = itertools.count(1)
_prefix: tuple[int, str] = (0, "")  # (pid, a random id made on first use in that process)


def event_id() -> str:
    """A new event id, unique across processes: a random per-process prefix and a counter
    (an event costs no random bytes or base-36 encoding of its own; most have no
    subscriber)."""
    global _prefix
    pid = os.getpid()
    if _prefix[0] != pid:
        _prefix = (pid, new_id("e"))
    return f"{_prefix[1]}{next(_serial):x}"


@dataclass(frozen=True, slots=True)
class Event:
    """One event: id, type, time, origin, session, turn and payload (snake_case keys; the
    transports spell them their way)."""

    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    turn_id: str | None = None
    origin: str = "system"
    id: str = field(default_factory=event_id)
    time: float = field(default_factory=time.time)


def make_event(type: str, payload: dict[str, Any] | None = None, *,
               session_id: str | None = None, turn_id: str | None = None,
               origin: str = "system") -> Event:
    """Build an event, taking session and turn from the turn ContextVars when not given."""
    return Event(
        type=type,
        payload=payload or {},
        session_id=session_id if session_id is not None else current_session_id.get(),
        turn_id=turn_id if turn_id is not None else current_turn_id.get(),
        origin=origin,
    )


@dataclass(slots=True)
class _Subscription:
    handler: Handler
    types: frozenset[str] | None
    is_async: bool


class EventBus:
    """Fan-out of events to subscribers, by type or to all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: tuple[_Subscription, ...] = ()
        self._tasks: set[asyncio.Task[None]] = set()

    def subscribe(self, handler: Handler, types: Iterable[str] | None = None) -> Callable[[], None]:
        """Subscribe to the given event types (all when None); returns an unsubscribe function."""
        sub = _Subscription(handler, frozenset(types) if types is not None else None,
                            inspect.iscoroutinefunction(handler))
        with self._lock:
            self._subs = (*self._subs, sub)

        def unsubscribe() -> None:
            with self._lock:
                self._subs = tuple(s for s in self._subs if s is not sub)

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Deliver an event to every matching subscriber; never raises."""
        for sub in self._subs:  # tuple snapshot: subscribers may change during delivery
            if sub.types is not None and event.type not in sub.types:
                continue
            if sub.is_async:
                self._schedule(sub, event)
                continue
            try:
                sub.handler(event)
            except Exception:
                log.exception("event handler %r failed on %s", sub.handler, event.type)

    def _schedule(self, sub: _Subscription, event: Event) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            log.debug("no running loop: async handler %r skipped for %s", sub.handler, event.type)
            return
        try:
            coro = sub.handler(event)
            task: asyncio.Task[None] = loop.create_task(coro)  # type: ignore[arg-type]
        except Exception:
            log.exception("event handler %r failed on %s", sub.handler, event.type)
            return
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("async event handler failed", exc_info=task.exception())

    @property
    def subscriber_count(self) -> int:
        """How many subscriptions are active."""
        return len(self._subs)


def emit_safe(type: str, payload: dict[str, Any] | None = None, *,
              bus: EventBus | None, **kwargs: Any) -> None:
    """Build and emit an event on ``bus`` (none: nothing), swallowing any failure."""
    if bus is None:
        return
    try:
        bus.emit(make_event(type, payload, **kwargs))
    except Exception:
        log.exception("emit_safe(%s) failed", type)
