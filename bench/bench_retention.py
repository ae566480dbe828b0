"""Write turns on both sides of the retention limit (200 checkpoints): no cliff.

Runs ``BENCH_RETENTION_TURNS`` (default 240) offline turns that each write one file (so each
makes a checkpoint), and prints the median of the ten turns before the 200th checkpoint beside
the median of the ten after it (target <= 1.3x apart), and the slowest turn past it (target:
none over 100 ms more than the median before). Retention runs in a background thread after a
turn, so its cost shows only as lock waits on later turns. The figure and baseline come from
one run but are sequential by nature (the limit is crossed once).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher.finalize import wait_for_retention


def main() -> None:
    turns = int(os.environ.get("BENCH_RETENTION_TURNS", "240"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        d = build_dispatcher(AppConfig(workspace=ws, home=root / "home", model="offline",
                                       permission_mode="bypass"))
        sid = d.process_user_turn(TurnRequest(text="write f0.txt zero")).session_id
        times: list[float] = []
        counts: list[int] = []
        for n in range(1, turns):
            t = time.perf_counter()
            d.process_user_turn(TurnRequest(text=f"write f{n % 50}.txt version {n}",
                                            session_id=sid))
            times.append(time.perf_counter() - t)
            cp = d.checkpointer(ws)
            counts.append(len(cp.list()) if cp is not None else 0)  # type: ignore[attr-defined]
        wait_for_retention()
        crossed = next((i for i, c in enumerate(counts) if c >= 200), None)
        if crossed is None:
            print(f"the limit was not reached in {turns} turns", flush=True)
            return
        before = statistics.median(times[max(0, crossed - 10):crossed])
        after = statistics.median(times[crossed + 1:crossed + 11])
        report("write turns just after the 200th checkpoint", after, before,
               target="<= 1.3x; baseline = the ten turns just before it")
        worst = max(times[crossed:])
        report("slowest write turn past the limit", worst, before,
               target="none over 100 ms above the median before")
        cp = d.checkpointer(ws)
        kept = len(cp.list()) if cp is not None else 0  # type: ignore[attr-defined]
        print(f"checkpoints kept at the end: {kept} (limit 200; a turn's checkpoint is kept while "
              "its session's node references it, so only unreferenced ones can go)", flush=True)


if __name__ == "__main__":
    main()
