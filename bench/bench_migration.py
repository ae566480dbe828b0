"""Opening and continuing a session written by the first layout (flat nodes, ``git add -A``
commits, loose objects only), built by real git as that version wrote it.

Figures, for a ``BENCH_MIGRATION_TURNS`` (500) turn flat session:

- the first commit under the current code (the one-time upgrade: every file committed, the
  stale index dropped) beside the next, ordinary commit of the same session;
- the session's ``.git`` before and after the background repack the upgrade starts, and how
  long that repack took (off the turn's path);
- reading the whole branch of the old session beside the same read of a current-layout copy.

    BENCH_MIGRATION_TURNS=500 python bench/bench_migration.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

from tests.store._legacy_session import write_legacy_session

from _util import disk_size, report
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.session_repo import wait_for_maintenance
from openprogram_lsp.store.session_store import SessionStore


def main() -> None:
    turns = int(os.environ.get("BENCH_MIGRATION_TURNS", "500"))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        t0 = time.perf_counter()
        old = write_legacy_session(home / "sessions", "s20261130old", "flat", turns=turns,
                                   workspace=tmp)
        print(f"flat session of {turns} turns written by git in "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
        root: Path = old["root"]
        size_before = disk_size(root / ".git")
        store = SessionStore(home)
        sid = "s20261130old"
        t0 = time.perf_counter()
        store.get_branch(sid)
        read_old = time.perf_counter() - t0

        def one_turn(n: int) -> float:
            head = store.head(sid)
            store.append(sid, Node(id=f"new{n}", role="user", text="hello",
                                   predecessor=head), advance_head=True)
            t = time.perf_counter()
            store.commit_turn(sid, f"turn: new {n}")
            return time.perf_counter() - t

        first = one_turn(0)
        t0 = time.perf_counter()
        wait_for_maintenance(600)
        repack = time.perf_counter() - t0
        ordinary = sorted(one_turn(n) for n in range(1, 8))[3]
        report("first commit of a flat session (upgrade)", first, ordinary,
               target="reported; baseline = the median of its next 7 commits")
        report(f"flat session .git before / after the repack ({turns} turns)", size_before,
               disk_size(root / ".git"), unit="MB", target="reported")
        print(f"  background repack waited for: {repack:.1f} s after the first commit",
              flush=True)
        fresh = SessionStore(home)
        t0 = time.perf_counter()
        fresh.get_branch(sid)
        report("read the whole branch of the old session (cold)", read_old,
               time.perf_counter() - t0, target="baseline = the same read after the upgrade")


if __name__ == "__main__":
    main()
