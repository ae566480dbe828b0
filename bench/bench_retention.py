"""Write turns on both sides of the retention limit (200 checkpoints): no cliff.

Runs ``BENCH_RETENTION_TURNS`` (default 300) offline turns that each write one file (so each
makes a checkpoint). The turns go to a new session every ``BENCH_SESSION_TURNS`` (10) turns,
and the session from three sessions back is deleted, so its checkpoints lose their last
reference and retention really drops some (a turn's checkpoint is kept while its node
references it). Figures:

- the median of the ten write turns just after the 200th checkpoint beside the ten just before
  it (target <= 1.3x apart);
- the slowest write turn that overlapped a retention pass (it runs in a background thread after
  a turn; its cost shows only as lock waits and CPU shared with turns that overlap it) beside
  that median before (target: none more than 100 ms above it); the overlapping turns beside the
  other turns past the limit (median and slowest: what the machine's load alone does), and the
  slowest turn past the limit for reference;
- how many retention passes ran, how many checkpoints they dropped and how long they took.

The figure and baseline come from one run but are sequential by nature (the limit is crossed
once).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher.finalize import wait_for_retention
from openprogram_lsp.store.checkpoints.store import CheckpointStore

_passes: list[tuple[float, float, int]] = []  # (start, end, dropped) of each retention pass
_passes_lock = threading.Lock()


def _record_passes() -> None:
    original = CheckpointStore.prune_if_due

    def timed(self: CheckpointStore, *args: Any, **kwargs: Any) -> list[str]:
        t0 = time.perf_counter()
        dropped = original(self, *args, **kwargs)
        with _passes_lock:
            _passes.append((t0, time.perf_counter(), len(dropped)))
        return dropped

    CheckpointStore.prune_if_due = timed  # type: ignore[method-assign]


def main() -> None:
    turns = int(os.environ.get("BENCH_RETENTION_TURNS", "300"))
    per_session = int(os.environ.get("BENCH_SESSION_TURNS", "10"))
    _record_passes()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        d = build_dispatcher(AppConfig(workspace=ws, home=root / "home", model="offline",
                                       permission_mode="bypass"))
        sessions = [d.process_user_turn(TurnRequest(text="write f0.txt zero")).session_id]
        spans: list[tuple[float, float]] = []
        counts: list[int] = []
        for n in range(1, turns):
            if n % per_session == 0:
                sessions.append(d.process_user_turn(
                    TurnRequest(text=f"write g{n}.txt start")).session_id)
                if len(sessions) > 3:
                    d.services.store.delete_session(sessions.pop(0))
            t = time.perf_counter()
            d.process_user_turn(TurnRequest(text=f"write f{n % 50}.txt version {n}",
                                            session_id=sessions[-1]))
            spans.append((t, time.perf_counter()))
            cp = d.checkpointer(ws)
            counts.append(len(cp.list()) if cp is not None else 0)  # type: ignore[attr-defined]
        wait_for_retention()
        times = [end - start for start, end in spans]
        crossed = next((i for i, c in enumerate(counts) if c >= 200), None)
        if crossed is None:
            print(f"the limit was not reached in {turns} turns", flush=True)
            return
        before = statistics.median(times[max(0, crossed - 10):crossed])
        after = statistics.median(times[crossed + 1:crossed + 11])
        report("write turns just after the 200th checkpoint", after, before,
               target="<= 1.3x; baseline = the ten turns just before it")
        with _passes_lock:
            passes = list(_passes)
        pruning = [p for p in passes if p[2]]
        past = spans[crossed:]
        hit = [any(s < end and start < e for s, e, _n in pruning) for start, end in past]
        overlapped = [end - start for (start, end), h in zip(past, hit, strict=True) if h]
        clear = [end - start for (start, end), h in zip(past, hit, strict=True) if not h]
        if overlapped:
            report("slowest write turn overlapping a prune", max(overlapped), before,
                   target="none over 100 ms above the median before")
        else:
            print("no write turn overlapped a prune", flush=True)
        if overlapped and clear:
            report("  overlapping turns (median) vs the others past the limit",
                   statistics.median(overlapped), statistics.median(clear), target="reported")
            report("  slowest turn overlapping a prune vs the slowest of the others",
                   max(overlapped), max(clear), target="reported (load shows in both)")
        report("slowest write turn past the limit (any cause)", max(times[crossed:]), before,
               target="reported")
        dropped = sum(p[2] for p in passes)
        took = [p[1] - p[0] for p in pruning]
        print(f"retention passes: {len(passes)}, {len(pruning)} dropped {dropped} checkpoints, "
              f"each {min(took, default=0) * 1e3:.0f}-{max(took, default=0) * 1e3:.0f} ms in the "
              f"background; {len(overlapped)} write turns overlapped one", flush=True)
        cp = d.checkpointer(ws)
        kept = len(cp.list()) if cp is not None else 0  # type: ignore[attr-defined]
        print(f"checkpoints kept at the end: {kept} (limit 200)", flush=True)


if __name__ == "__main__":
    main()
