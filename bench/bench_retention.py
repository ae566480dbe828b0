"""Write turns on both sides of the retention limit (200 checkpoints): no cliff.

Two dispatchers run the same offline turns, interleaved A B A B: A has the default limit of
200 checkpoints, B (the baseline) a limit it never reaches, so B's turns are what the same
turns cost without retention, on the same machine at the same moment. Each makes
``BENCH_RETENTION_TURNS`` (default 300) turns that write one file (so each checkpoints). The
turns go to a new session every ``BENCH_SESSION_TURNS`` (10) turns, and the session from three
sessions back is deleted, so its checkpoints lose their last reference and retention really
drops some (a turn's checkpoint is kept while its node references it). Figures:

- A's ten write turns just after its 200th checkpoint beside the ten just before it (target
  <= 1.3x apart), and beside B's same ten turns (interleaved pairs, median);
- every A turn that overlapped a retention pass (it runs in a background thread after a turn;
  its cost shows as lock waits and CPU shared with the turn) beside its paired B turn: the
  median and the largest excess over the pair (target: none over 100 ms);
- A's turns past the limit beside B's (median of pairs), and the slowest of each;
- how many retention passes ran, how many checkpoints they dropped and how long they took.
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
from openprogram_lsp.app import AppConfig, build_dispatcher, checkpointer_factory
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher.finalize import wait_for_retention
from openprogram_lsp.store.checkpoints import CheckpointConfig
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


class _Side:
    """One dispatcher, its workspace and its sessions."""

    def __init__(self, root: Path, name: str, max_count: int | None) -> None:
        self.ws = root / name / "ws"
        self.ws.mkdir(parents=True)
        home = root / name / "home"
        self.d = build_dispatcher(AppConfig(workspace=self.ws, home=home, model="offline",
                                            permission_mode="bypass"))
        if max_count is not None:  # the baseline: a limit it never reaches
            self.d.services.checkpointer_for = checkpointer_factory(
                home, CheckpointConfig(max_count=max_count))
        self.sessions = [self.turn("write f0.txt zero")]
        self.spans: list[tuple[float, float]] = []
        self.counts: list[int] = []

    def turn(self, text: str, sid: str | None = None) -> str:
        return self.d.process_user_turn(TurnRequest(text=text, session_id=sid)).session_id

    def step(self, n: int, per_session: int) -> None:
        if n % per_session == 0:
            self.sessions.append(self.turn(f"write g{n}.txt start"))
            if len(self.sessions) > 3:
                self.d.services.store.delete_session(self.sessions.pop(0))
        t = time.perf_counter()
        self.turn(f"write f{n % 50}.txt version {n}", self.sessions[-1])
        self.spans.append((t, time.perf_counter()))
        cp = self.d.checkpointer(self.ws)
        self.counts.append(len(cp.list()) if cp is not None else 0)  # type: ignore[attr-defined]

    def times(self) -> list[float]:
        return [end - start for start, end in self.spans]


def main() -> None:
    turns = int(os.environ.get("BENCH_RETENTION_TURNS", "300"))
    per_session = int(os.environ.get("BENCH_SESSION_TURNS", "10"))
    _record_passes()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        a = _Side(root, "a", None)
        b = _Side(root, "b", 10**6)
        for n in range(1, turns):
            a.step(n, per_session)
            b.step(n, per_session)
        wait_for_retention()
        ta, tb = a.times(), b.times()
        crossed = next((i for i, c in enumerate(a.counts) if c >= 200), None)
        if crossed is None or crossed < 10 or crossed + 11 > len(ta):
            print(f"the limit was not crossed with ten turns either side in {turns} turns",
                  flush=True)
            return
        before = statistics.median(ta[crossed - 10:crossed])
        after = statistics.median(ta[crossed + 1:crossed + 11])
        report("write turns just after the 200th checkpoint", after, before,
               target="<= 1.3x; baseline = the ten turns just before it")
        b_after = statistics.median(tb[crossed + 1:crossed + 11])
        report("  the same ten turns vs the baseline's", after, b_after,
               target="reported; baseline = same turns, no retention, interleaved")
        report("  the baseline's own ten turns after vs before", b_after,
               statistics.median(tb[crossed - 10:crossed]),
               target="reported: what changes at that point without retention")
        with _passes_lock:
            passes = list(_passes)
        pruning = [p for p in passes if p[2]]
        past = range(crossed, len(ta))
        hit = [i for i in past
               if any(s < a.spans[i][1] and a.spans[i][0] < e for s, e, _n in pruning)]
        if hit:
            excess = [ta[i] - tb[i] for i in hit]
            report("write turns overlapping a prune (median)",
                   statistics.median(ta[i] for i in hit), statistics.median(tb[i] for i in hit),
                   target="baseline = the paired turns without retention")
            worst = max(hit, key=lambda i: ta[i] - tb[i])
            report("  the largest excess over its pair", ta[worst], tb[worst],
                   target=f"excess {max(excess) * 1e3:.0f} ms; none over 100 ms")
            clear = [i for i in past if i not in hit]
            if clear:  # what load alone does to a pair: the noise floor of that figure
                calm = max(clear, key=lambda i: ta[i] - tb[i])
                report("  the largest excess of a turn no prune overlapped", ta[calm], tb[calm],
                       target=f"excess {(ta[calm] - tb[calm]) * 1e3:.0f} ms; reported (load)")
        else:
            print("no write turn overlapped a prune", flush=True)
        report("write turns past the limit (median)", statistics.median(ta[crossed:]),
               statistics.median(tb[crossed:]), target="baseline = same turns, no retention")
        report("slowest write turn past the limit", max(ta[crossed:]), max(tb[crossed:]),
               target="reported (load shows in both)")
        dropped = sum(p[2] for p in passes)
        took = [p[1] - p[0] for p in pruning]
        print(f"retention passes that dropped checkpoints: {len(pruning)}, {dropped} in all, "
              f"each {min(took, default=0) * 1e3:.0f}-{max(took, default=0) * 1e3:.0f} ms in the "
              f"background; {len(hit)} write turns overlapped one", flush=True)
        print(f"checkpoints kept at the end: {a.counts[-1]} (limit 200); baseline "
              f"{b.counts[-1]}", flush=True)


if __name__ == "__main__":
    main()
