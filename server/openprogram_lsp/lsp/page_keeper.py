"""Keeps sessions' first history pages for the next fresh server, in one background thread.

A session is queued when a turn of it finished here (once it has been idle for ``IDLE``) and
after a first page of it was read the ordinary way (``AFTER_READ`` later); the thread writes
``store.page_snapshot`` files, never on a request's or a turn's path. Writing is checked by
stamps, not by timing, so when it runs only changes how often a kept page is there to serve.
"""

from __future__ import annotations

import json
import logging

from openprogram_lsp.core import memory
from openprogram_lsp.core.background import KeyedWorker
from openprogram_lsp.events.bus import Event
from openprogram_lsp.lsp.history_result import history_result
from openprogram_lsp.lsp.node_wire import WireCache
from openprogram_lsp.lsp.wire import HISTORY_PAGE
from openprogram_lsp.store.cold_page import HistoryPage
from openprogram_lsp.store.page_snapshot import Render
from openprogram_lsp.store.session_store import SessionStore

log = logging.getLogger(__name__)

IDLE = 2.0
"""Seconds after a session's last turn here before its page is kept (turns in a row wait)."""
AFTER_READ = 1.0
"""Seconds after a first page was read before it is kept."""
TRIES = 4
"""Attempts per request when writes keep landing while the page is read."""
KEEP_MAX = HISTORY_PAGE
"""The longest first page kept: the editors' page. A longer read (``limit`` up to
``HISTORY_MAX``) is not kept: rendering it again here would cost its memory a second time, in
this thread's heap, which the process keeps (docs/decisions/server-weight.md)."""


def render(sid: str) -> Render:
    """The history handler's answer for a page of ``sid``, as the JSON the protocol sends."""
    def one(page: HistoryPage) -> bytes:
        return json.dumps(history_result(sid, page, WireCache().wire_many)).encode()
    return one


class PageKeeper:
    """Queued sessions, each with the page size to keep and the attempts left."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._limits: dict[str, int] = {}  # the page size editors last asked of a session
        self._worker: KeyedWorker[str, tuple[int, int]] = KeyedWorker("page keeper",
                                                                      self._keep)

    def on_event(self, event: Event) -> None:
        """A bus listener: a finished turn queues its session."""
        if event.type == "turn.finished" and event.session_id:
            self.want(event.session_id, delay=IDLE)

    def want(self, sid: str, limit: int | None = None, *, delay: float = AFTER_READ) -> None:
        """Keep the first page of ``sid`` (``limit`` nodes: the size last asked) ``delay``
        seconds from now; asking again pushes it back. A read longer than ``KEEP_MAX`` is not
        kept (nor remembered as the size to keep)."""
        if limit is not None:
            if limit > KEEP_MAX:
                return
            if len(self._limits) >= 4096:
                self._limits.clear()
            self._limits[sid] = limit
        self._worker.ask(sid, (self._limits.get(sid, HISTORY_PAGE), TRIES), delay)

    def _keep(self, sid: str, request: tuple[int, int]) -> tuple[float, tuple[int, int]] | None:
        limit, tries = request
        try:
            again = self.store.keep_first_page(sid, render(sid), limit=limit)
        except Exception:  # a session deleted meanwhile, a full disk: not kept
            log.debug("keeping the first page of %s failed", sid, exc_info=True)
            return None
        finally:
            memory.release()  # the page it read and rendered: not kept by this thread's heap
        return (again, (limit, tries - 1)) if again is not None and tries > 1 else None

    def drain(self, timeout: float = 10.0) -> bool:
        """Run what is queued now, whatever its delay, and wait for it (tests); False on
        timeout."""
        return self._worker.drain(timeout, now=True)
