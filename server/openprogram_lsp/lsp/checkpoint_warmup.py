"""The first checkpoint walk of each workspace folder, in the background as soon as the editor
names its folders, with ``$/progress`` while files are hashed.

The first checkpoint of a process walks the tree, and for a new store hashes every file (tens
of seconds at 100,000 files). ``CheckpointStore.prepare`` does that walk ahead of the first
edit; the edit's baseline waits for it only if it is still running, and then builds on it.
It starts ``START_AFTER`` seconds after the folders are named, so the editor's first screen is
answered first. A progress (``window/workDoneProgress/create`` first, only for clients that
support it) is shown once files are being hashed or the walk has taken ``SHOW_AFTER`` seconds,
so opening a small project shows nothing.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types

from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.store.checkpoints.store import CheckpointStore

log = logging.getLogger(__name__)

START_AFTER = 0.5
"""Seconds after the folders are named before the walk starts: the editor's first requests
(sessions, the history page) are answered before it competes with them for the CPU."""
SHOW_AFTER = 2.0
"""Seconds of walking after which the progress appears even before any file is hashed."""
REPORT_EVERY = 0.25
"""Seconds between progress reports."""
CREATE_TIMEOUT = 10.0


class CheckpointWarmup:
    """Starts ``prepare`` once per workspace folder of a server and reports its progress to
    the connection that named the folder."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self._started: set[Path] = set()
        self._cancels: set[threading.Event] = set()
        self._stopped = False

    def stop(self) -> None:
        """Stop the walks (the editor is shutting the server down): a process waiting for a
        walk of a big tree to end could not exit. The next process walks again."""
        self._stopped = True
        for cancel in self._cancels:
            cancel.set()

    def start(self, roots: list[Path]) -> None:
        """Begin the walk of every folder not walked yet (returns at once)."""
        for root in roots:
            key = root.resolve()
            if key in self._started or not key.is_dir():
                continue
            self._started.add(key)
            self.server.track(asyncio.ensure_future(self._run(key)))

    async def _run(self, root: Path) -> None:
        try:
            store = self.server.dispatcher.checkpointer(root)
        except OpenProgramError as exc:  # a bad workspace config: the turn reports it
            log.info("no background checkpoint walk of %s: %s", root, exc.message)
            return
        if not isinstance(store, CheckpointStore):
            return
        loop = asyncio.get_running_loop()
        counts = [0, 0]  # files done, files in all (written by the walking thread)
        hashing = asyncio.Event()

        def on_files(done: int, total: int) -> None:
            counts[0], counts[1] = done, total
            if not hashing.is_set():
                loop.call_soon_threadsafe(hashing.set)

        # whoever walks first (this, or a turn's first edit before it starts) reports here
        store.progress = on_files
        try:
            await self._walk(root, store, counts, hashing, on_files)
        finally:
            if store.progress is on_files:
                store.progress = None

    async def _walk(self, root: Path, store: CheckpointStore, counts: list[int],
                    hashing: asyncio.Event, on_files: Any) -> None:
        await asyncio.sleep(START_AFTER)
        if self._stopped:
            return
        cancel = threading.Event()
        self._cancels.add(cancel)
        work = asyncio.ensure_future(asyncio.to_thread(store.prepare, on_files, cancel))
        work.add_done_callback(lambda _: self._cancels.discard(cancel))
        token = await self._show_when_slow(work, hashing, root)
        while not work.done():
            await asyncio.wait({work}, timeout=REPORT_EVERY)
            if token is not None and counts[1]:
                self._report(token, counts)
        try:
            walked = work.result()
            if walked:
                message = f"{counts[1]:,} files recorded" if counts[1] else "workspace recorded"
            elif cancel.is_set():
                message = "stopped"
            else:  # a turn's first edit walked first (and reported here), or an earlier one
                message = f"{counts[1]:,} files recorded" if counts[1] else "already recorded"
        except Exception as exc:
            log.warning("background checkpoint walk of %s failed: %s", root, exc)
            message = f"not recorded: {exc}"[:200]
        if token is not None:
            if counts[1]:
                self._report(token, counts)
            wdp = self.server.work_done_progress
            wdp.end(token, types.WorkDoneProgressEnd(message=message))
            wdp.tokens.pop(token, None)

    async def _show_when_slow(self, work: asyncio.Future[Any], hashing: asyncio.Event,
                              root: Path) -> str | None:
        """Wait until files are hashed or ``SHOW_AFTER`` passed, then create and begin a
        progress; None when the walk ended first without hashing a file, or the client takes
        no progress. Files hashed get one however soon the walk ended (hashed by a turn's
        first edit that walked before this began, this ``prepare`` is a no-op, done at once)."""
        waiter: asyncio.Future[Any] = asyncio.ensure_future(hashing.wait())
        try:
            await asyncio.wait({work, waiter}, timeout=SHOW_AFTER,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if (work.done() and not hashing.is_set()) \
                or not self.server.settings.client.work_done_progress:
            return None
        token = f"openprogram-checkpoint-{uuid.uuid4().hex[:12]}"
        wdp = self.server.work_done_progress
        try:
            await asyncio.wait_for(wdp.create_async(token), CREATE_TIMEOUT)
        except Exception:
            log.debug("work done progress refused", exc_info=True)
            return None
        wdp.begin(token, types.WorkDoneProgressBegin(
            title="OpenProgram", message=f"Recording a first checkpoint of {root.name}",
            percentage=0, cancellable=False))
        return token

    def _report(self, token: str, counts: list[int]) -> None:
        done, total = counts
        self.server.work_done_progress.report(token, types.WorkDoneProgressReport(
            message=f"{done:,} of {total:,} files", percentage=min(100, done * 100 // total)))
