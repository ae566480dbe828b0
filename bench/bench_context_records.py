"""ContextCommit bytes after an idle gap against the session's length, and the idle-gap turn
with the record's lists stored as a delta against the same turn storing them in full.

Figures (each beside a baseline from the same run):

- the bytes of the record of turn N+3 of an N-turn synthetic session whose kept history holds
  an idle gap (``BENCH_RECORDS``, default ``2500,5000,10000,20000``; every 10th reply read a
  file, so about N/20 results are cleared), as stored vs as a version-2 record would store it
  (its ``replaced``/``protected`` lists in full); the target: the same at every N;
- on the largest size, A B A B ... (median of ``BENCH_PAIRS`` pairs, default 9): a turn of
  one session whose records are deltas vs a turn of a second such session whose records are
  written in full (its store given no base: what version 2 wrote), the wall time of the turn
  and the thread CPU of its ``write_context_commit``. Two sessions, so each keeps its own
  line of records (alternating on one, every delta would sit on a fresh full record).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _util import context_record_bytes, offline_dispatcher, report
from bench_turn import _synthetic
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.store.session_repo import wait_for_maintenance


def main() -> None:
    sizes = [int(n) for n in os.environ.get("BENCH_RECORDS", "2500,5000,10000,20000").split(",")
             if n]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        d, ws = offline_dispatcher(root, permission_mode="bypass")
        store = d.services.store
        engine = d.services.context  # the whole history kept: every result stays in the lists
        engine.config = replace(engine.config, window_override=10_000_000)
        spent: list[float] = []
        write = store.write_context_commit

        def timed_write(sid: str, turn_id: str, record: dict[str, Any]) -> None:
            c0 = time.thread_time()
            try:
                write(sid, turn_id, record)
            finally:
                spent.append(time.thread_time() - c0)

        vars(store)["write_context_commit"] = timed_write
        sid = ""
        for n in sorted(sizes):
            t0 = time.perf_counter()
            sid = _synthetic(store, n, ws, idle=True)
            wait_for_maintenance(timeout=600)
            report(f"write a {n}-turn idle session (setup)", time.perf_counter() - t0, unit="s")
            stored: list[int] = []
            full: list[int] = []
            for t in range(5):
                r = d.process_user_turn(TurnRequest(text="hello", session_id=sid))
                if t >= 2:  # the first record of a session opened here has no base to use
                    a, b = context_record_bytes(store, sid, r.assistant_node_id)
                    stored.append(a)
                    full.append(b)
            report(f"record of turn {n + 5}, stored vs lists in full",
                   statistics.median(stored), statistics.median(full), unit="B",
                   target="stored: the same at every N")

        other = _synthetic(store, max(sizes), ws, idle=True)
        wait_for_maintenance(timeout=600)

        def turn(on: str = sid) -> float:
            t0 = time.perf_counter()
            d.process_user_turn(TurnRequest(text="hello", session_id=on))
            return time.perf_counter() - t0

        def no_base(*_: object) -> None:
            return None

        def in_full() -> float:
            vars(store)["_lists_base"] = no_base
            try:
                return turn(other)
            finally:
                del vars(store)["_lists_base"]

        in_full()

        walls: dict[str, list[float]] = {"delta": [], "full": []}
        cpus: dict[str, list[float]] = {"delta": [], "full": []}
        runs: tuple[tuple[str, Callable[[], float]], ...] = (("delta", turn), ("full", in_full))
        for _ in range(max(7, int(os.environ.get("BENCH_PAIRS", "9")))):
            for name, fn in runs:
                walls[name].append(fn())
                cpus[name].append(spent[-1])
        n = max(sizes)
        report(f"idle-gap turn of {n} turns, record as a delta vs in full",
               statistics.median(walls["delta"]), statistics.median(walls["full"]))
        report("  its write_context_commit (thread CPU)", statistics.median(cpus["delta"]),
               statistics.median(cpus["full"]), unit="us")


if __name__ == "__main__":
    main()
