"""The watcher under odd bytes and bursts: it never stops, and no change is lost to the next
checkpoint."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from tests.store._cp_helpers import open_store

from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.store.watcher import WorkspaceWatcher, undecodable_path


def test_the_undecodable_path_of_a_watchfiles_error_is_recovered() -> None:
    message = r'Unable to decode path "/w/caf\xE9 \"q\".txt" to string'
    assert undecodable_path(message) == '/w/caf\udce9 "q".txt'
    assert undecodable_path("something else") is None


async def _until(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_a_latin1_file_name_does_not_stop_the_watcher(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    seen: list[str] = []
    bus.subscribe(lambda ev: seen.extend(c["path"] for c in ev.payload["changes"]),
                  ["file.changed"])
    walks: list[int] = []
    watcher = WorkspaceWatcher(tmp_path, bus,
                               on_changes=lambda root, ch: walks.append(len(ch)))
    watcher.start()
    try:
        await watcher.ready.wait()
        await asyncio.sleep(0.2)
        with open(os.fsencode(tmp_path) + b"/caf\xe9.txt", "wb") as fh:
            fh.write(b"latin-1 name\n")
        await _until(lambda: "caf\udce9.txt" in seen)
        assert 0 in walks  # what the failed batch held is lost: the next checkpoint walks
        for i in range(200):  # still watching
            (tmp_path / "after.txt").write_text(str(i))
            await asyncio.sleep(0.05)
            if "after.txt" in seen:
                break
        assert "after.txt" in seen
        assert "not UTF-8" in caplog.text
    finally:
        await watcher.stop()


# 20,000 in full (OPENPROGRAM_BURST_FILES=20000, or tests/stress/crash_turns.py); CI writes
# 5,000: past the burst threshold and past what the store tracks path by path.
BURST_FILES = int(os.environ.get("OPENPROGRAM_BURST_FILES", "5000"))


async def test_a_burst_of_files_is_all_in_the_next_checkpoint(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = open_store(ws, tmp_path / "home")
    assert store.ensure_baseline("s") is not None  # the first (walking) checkpoint is done
    bus = EventBus()
    batches: list[Event] = []
    bus.subscribe(batches.append, ["file.changed"])
    watcher = WorkspaceWatcher(ws, bus, on_changes=lambda root, ch: store.note_paths(
        [c["path"] for c in ch]))
    watcher.start()
    try:
        await watcher.ready.wait()
        await asyncio.sleep(0.2)
        for n in range(BURST_FILES):
            if n % 1000 == 0:
                (ws / f"d{n // 1000}").mkdir()
            (ws / f"d{n // 1000}" / f"f{n}.txt").write_bytes(b"%d\n" % n)
        await _until(lambda: bool(batches), timeout=30)
        quiet = 0
        while quiet < 10:  # the watcher has delivered everything once it is quiet for 0.5 s
            count = len(batches)
            await asyncio.sleep(0.05)
            quiet = quiet + 1 if len(batches) == count else 0
    finally:
        await watcher.stop()
    cp = await asyncio.to_thread(store.commit_turn, "s", "t1", "burst")
    assert cp is not None and len(cp.files) == BURST_FILES
