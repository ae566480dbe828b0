"""An ordered outbox of notifications to the client, fed from any thread.

Bus events arrive on whatever thread emitted them; each becomes a send scheduled on the agent's
loop (``call_soon_threadsafe`` off-loop) and one task sends them in arrival order. ``flush``
waits until everything queued so far went out, so a ``tool_call`` always precedes the
permission request about it and every update precedes the prompt's response.

Text queued right behind text of the same stream, while that one still waits to go out, joins
it: one ``agent_message_chunk`` instead of dozens, in the same order. Text at the head of an
otherwise empty queue waits until it is ``events.coalesce.INTERVAL`` old before it goes, so a
fast stream becomes one chunk per interval (whatever is queued behind it waits with it). A
``flush`` cuts that wait short: whoever flushes (a permission request, a prompt's response)
wants everything out now, and the turn's last words no longer hold its answer back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable

from openprogram_lsp.events.coalesce import INTERVAL

log = logging.getLogger(__name__)

Send = Callable[[], Awaitable[None]]


class _Text:
    """A text chunk waiting to be sent; more text may join it until it goes out."""

    def __init__(self, key: str, text: str, make: Callable[[str], Send], born: float) -> None:
        self.key = key
        self.born = born
        self.parts = [text]
        self.make = make
        self.taken = False

    async def __call__(self) -> None:
        self.taken = True
        await self.make("".join(self.parts))()


class Outbox:
    """Sends queued notifications one at a time, in order."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.get_ident()
        self._queue: asyncio.Queue[Send | asyncio.Future[None] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._last: Send | asyncio.Future[None] | None = None
        self._hurry = asyncio.Event()  # set while a flush waits: text goes without waiting
        self._flushing = 0

    def start(self) -> None:
        """Start the sending task (on the agent's loop)."""
        if self._task is None:
            self._task = self._loop.create_task(self._run(), name="acp.outbox")

    def put(self, send: Send) -> None:
        """Queue a send, from any thread."""
        self._on_loop(self._enqueue, send)

    def put_text(self, key: str, text: str, make: Callable[[str], Send]) -> None:
        """Queue text for stream ``key``; ``make(text)`` builds its send (may be joined)."""
        self._on_loop(self._enqueue_text, key, text, make)

    def _on_loop(self, fn: Callable[..., None], *args: object) -> None:
        if threading.get_ident() == self._thread:
            fn(*args)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(fn, *args)

    def _enqueue(self, item: Send | asyncio.Future[None]) -> None:
        self._last = item
        self._queue.put_nowait(item)

    def _enqueue_text(self, key: str, text: str, make: Callable[[str], Send]) -> None:
        last = self._last
        if isinstance(last, _Text) and last.key == key and not last.taken:
            last.parts.append(text)
            return
        self._enqueue(_Text(key, text, make, self._loop.time()))

    async def flush(self, timeout: float = 10.0) -> None:
        """Wait until everything queued before this call was sent (or failed)."""
        if self._task is None or self._task.done():
            return
        barrier: asyncio.Future[None] = self._loop.create_future()
        self._enqueue(barrier)
        self._flushing += 1
        self._hurry.set()
        try:
            await asyncio.wait_for(asyncio.shield(barrier), timeout)
        except TimeoutError:
            log.warning("outbox flush timed out after %ss", timeout)

    async def close(self) -> None:
        """Send what is queued, then stop."""
        if self._task is None:
            return
        self._last = None
        self._queue.put_nowait(None)
        try:
            await asyncio.wait_for(self._task, 5)
        except (TimeoutError, asyncio.CancelledError):
            self._task.cancel()
        self._task = None

    async def _run(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            if isinstance(item, asyncio.Future):
                self._flushing -= 1
                if self._flushing <= 0:
                    self._flushing = 0
                    self._hurry.clear()
                if not item.done():
                    item.set_result(None)
                continue
            if isinstance(item, _Text) and self._queue.empty() and not self._hurry.is_set():
                wait = item.born + INTERVAL - self._loop.time()
                if wait > 0:  # more of its stream joins it meanwhile, unless a flush comes
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._hurry.wait(), wait)
            try:
                await item()
            except ConnectionError:
                log.debug("client gone; dropping a notification")
            except Exception:
                log.exception("could not send a notification")
