"""Turns as tasks on the server loop: request cancellation becomes a turn cancel, not a dead task.

A ``$/cancelRequest`` (or shutdown) cancels the request's handler task; the handler then asks the
turn to stop through its TurnControl and still answers with the TurnResult (``cancelled``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.core.types import TurnRequest, TurnResult
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event

log = logging.getLogger(__name__)


class Progress:
    """Work-done progress of one turn ($/progress begin/report/end), best effort."""

    def __init__(self, server: Any, title: str) -> None:
        self._server = server
        self._title = title
        self.token = f"openprogram-{uuid.uuid4().hex[:12]}"
        self._began = False
        self._ended = False
        self._task: asyncio.Task[None] | None = None
        self.on_cancel: Callable[[], None] | None = None

    def start(self) -> None:
        """Create the token and send ``begin`` (without delaying the turn)."""
        self._task = asyncio.ensure_future(self._begin())

    async def _begin(self) -> None:
        wdp = self._server.work_done_progress
        try:
            await asyncio.wait_for(wdp.create_async(self.token), 10)
        except Exception:
            log.debug("work done progress refused", exc_info=True)
            return
        if self._ended:
            return
        wdp.begin(self.token, types.WorkDoneProgressBegin(title="OpenProgram",
                                                          message=self._title,
                                                          cancellable=True))
        self._began = True
        fut = wdp.tokens.get(self.token)
        if fut is not None:
            fut.add_done_callback(lambda f: self._cancelled(f))

    def _cancelled(self, fut: Any) -> None:
        if fut.cancelled() and not self._ended and self.on_cancel is not None:
            self.on_cancel()

    def report(self, message: str) -> None:
        """Report a step (ignored before ``begin``)."""
        if self._began and not self._ended:
            self._server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message[:200]))

    def end(self, message: str) -> None:
        """End the progress."""
        if self._ended:
            return
        self._ended = True
        if self._began:
            wdp = self._server.work_done_progress
            wdp.end(self.token, types.WorkDoneProgressEnd(message=message))
            wdp.tokens.pop(self.token, None)
        # A create request still in flight is left to finish (bounded by its timeout):
        # cancelling it makes pygls fail when the client's late reply arrives, and _begin
        # checks _ended after the reply, so no begin follows an end.


class TurnRunner:
    """Runs turns for handlers, tracks them, and cancels them all on shutdown."""

    def __init__(self, dispatcher: Dispatcher, server: Any,
                 listeners: list[Callable[[Event], None]]) -> None:
        self.dispatcher = dispatcher
        self.server = server
        self._listeners = listeners
        self._tasks: set[asyncio.Task[TurnResult]] = set()
        self._callers: set[asyncio.Task[Any]] = set()
        self._controls: set[TurnControl] = set()
        self._owned: dict[int, set[TurnControl]] = {}
        # whether a connection's turns outlive it (``serve --tcp --keep-turns``: the host
        # keeps them for an editor to re-attach); its request being cancelled then leaves them
        self.keeps: Callable[[Any], bool] = lambda _server: False

    def cancel_owner(self, owner: Any) -> int:
        """Interrupt the running turns one connection started (it shut down or went away);
        returns how many."""
        return self.cancel_key(id(owner))

    def cancel_key(self, key: int) -> int:
        """Interrupt the running turns owned under ``key`` (``id`` of a connection)."""
        controls = list(self._owned.get(key, ()))
        for control in controls:
            control.interrupt()
        return len(controls)

    def owns(self, owner: Any) -> bool:
        """Whether a connection has running turns."""
        return bool(self._owned.get(id(owner)))

    def hand_over(self, key: int, owner: Any) -> int:
        """The turns owned under ``key`` (a connection that went away) now belong to
        ``owner`` (the editor that re-attached); returns how many."""
        controls = self._owned.pop(key, set())
        if controls:
            self._owned.setdefault(id(owner), set()).update(controls)
        return len(controls)

    async def run(self, request: TurnRequest, *, progress: bool, server: Any = None,
                  on_session: Callable[[str], None] | None = None) -> TurnResult:
        """Run a turn to its result; cancelling the caller cancels the turn and still returns.

        ``server`` is the connection that asked (its progress, its turns); ``on_session`` is
        told the session id before the turn's first event.
        """
        server = server if server is not None else self.server
        control = TurnControl()
        self._controls.add(control)
        self._owned.setdefault(id(server), set()).add(control)
        tracker = Progress(server, request.text.splitlines()[0][:80]) if progress else None
        listener = None
        started: list[str] = []
        if tracker is not None:
            tracker.on_cancel = control.request_cancel
            tracker.start()

            def listener(ev: Event) -> None:
                if ev.turn_id and started and ev.turn_id == started[0] \
                        and ev.type == "tool.started":
                    tracker.report(str(ev.payload.get("title") or ev.payload.get("name")))

            self._listeners.append(listener)
        task = asyncio.ensure_future(self.dispatcher.run_turn(
            request, control=control, on_started=lambda t: started.append(t.turn_id),
            on_session=on_session))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _t: self._forget(control))
        caller = asyncio.current_task()
        if caller is not None:
            self._callers.add(caller)
        try:
            while True:
                try:
                    result = await asyncio.shield(task)
                    break
                except asyncio.CancelledError:
                    # $/cancelRequest or shutdown: stop the turn, still answer with its result
                    if caller is not None:
                        caller.uncancel()
                    if task.done():
                        result = task.result()
                        break
                    # its editor went away (the turn waits for another) or another editor
                    # took it over: the turn runs on
                    if self.keeps(server) or control not in self._owned.get(id(server), ()):
                        raise
                    control.request_cancel()
        except BaseException:
            if tracker is not None:
                tracker.end("failed")
            raise
        finally:
            if caller is not None:
                self._callers.discard(caller)
            if listener is not None:
                with contextlib.suppress(ValueError):
                    self._listeners.remove(listener)
        if tracker is not None:
            tracker.end(result.status)
        return result

    def _forget(self, control: TurnControl) -> None:
        """A turn ended: it is no one's any more (handed over, it was another owner's)."""
        self._controls.discard(control)
        for key, owned in list(self._owned.items()):
            owned.discard(control)
            if not owned:
                del self._owned[key]

    async def shutdown(self, timeout: float = 30.0) -> None:
        """Cancel every running turn and wait for their finalize."""
        self.dispatcher.cancel_all()
        for control in list(self._controls):
            control.interrupt()
        pending = [t for t in self._tasks | self._callers if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout)
        await self.dispatcher.agents.drain(timeout)  # children finalise too

    @property
    def running(self) -> int:
        """How many turns run now."""
        return sum(not t.done() for t in self._tasks)
