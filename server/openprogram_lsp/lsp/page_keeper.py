"""Keeps sessions' first history pages for the next fresh server, in one background thread.

A session is queued when a turn of it finished here (once it has been idle for ``IDLE``) and
after a first page of it was read the ordinary way (``AFTER_READ`` later); the thread writes
``store.page_snapshot`` files, never on a request's or a turn's path. Writing is checked by
stamps, not by timing, so when it runs only changes how often a kept page is there to serve.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time

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


def render(sid: str) -> Render:
    """The history handler's answer for a page of ``sid``, as the JSON the protocol sends."""
    def one(page: HistoryPage) -> bytes:
        return json.dumps(history_result(sid, page, WireCache().wire_many)).encode()
    return one


class PageKeeper:
    """Queued sessions, each with the page size to keep and when to try."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._pid = os.getpid()
        self._cond = threading.Condition()
        self._due: dict[str, tuple[float, int, int]] = {}  # sid -> (when, limit, tries left)
        self._limits: dict[str, int] = {}  # the page size editors last asked of a session
        self._thread: threading.Thread | None = None
        self._busy = False

    def on_event(self, event: Event) -> None:
        """A bus listener: a finished turn queues its session."""
        if event.type == "turn.finished" and event.session_id:
            self.want(event.session_id, delay=IDLE)

    def want(self, sid: str, limit: int | None = None, *, delay: float = AFTER_READ) -> None:
        """Keep the first page of ``sid`` (``limit`` nodes: the size last asked) ``delay``
        seconds from now; asking again pushes it back."""
        if limit is not None:
            if len(self._limits) >= 4096:
                self._limits.clear()
            self._limits[sid] = limit
        size = self._limits.get(sid, HISTORY_PAGE)
        if self._pid != os.getpid():  # a forked child: its own thread (and a lock no thread
            self._pid, self._thread, self._due = os.getpid(), None, {}  # of the parent holds)
            self._cond, self._busy = threading.Condition(), False
        with self._cond:
            self._due[sid] = (time.monotonic() + delay, size, TRIES)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="page keeper",
                                                daemon=True)
                self._thread.start()
            else:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    now = time.monotonic()
                    soonest = min(self._due.items(), key=lambda kv: kv[1][0], default=None)
                    if soonest is not None and soonest[1][0] <= now:
                        break
                    self._busy = False
                    self._cond.notify_all()  # wake drain()
                    self._cond.wait(None if soonest is None else soonest[1][0] - now)
                sid, (_when, limit, tries) = soonest
                del self._due[sid]
                self._busy = True
            try:
                again = self.store.keep_first_page(sid, render(sid), limit=limit)
            except Exception:  # a session deleted meanwhile, a full disk: not kept
                log.debug("keeping the first page of %s failed", sid, exc_info=True)
                again = None
            if again is not None and tries > 1:
                with self._cond:
                    self._due.setdefault(sid, (time.monotonic() + again, limit, tries - 1))

    def drain(self, timeout: float = 10.0) -> bool:
        """Run what is queued now, whatever its delay, and wait for it (tests); False on
        timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._due = {sid: (0.0, limit, tries) for sid, (_w, limit, tries) in
                         self._due.items()}
            self._cond.notify_all()
            while self._due or self._busy:
                left = deadline - time.monotonic()
                if left <= 0 or self._thread is None or not self._thread.is_alive():
                    return False
                self._cond.wait(left)
        return True
