"""Opening and continuing a session written by the first layout (flat nodes, ``git add -A``
commits, loose objects only), built by real git as that version wrote it.

Figures, for a ``BENCH_MIGRATION_TURNS`` (500) turn flat session:

- the first commit under the current code (the one-time upgrade: every file committed, the
  stale index dropped) beside the next, ordinary commit of the same session;
- the session's ``.git`` before and after the background repack the upgrade starts, and how
  long that repack took (off the turn's path);
- reading the whole branch of the old session with a fresh store, before and after the upgrade,
  beside the same read of the same branch written by the current store (interleaved, median of
  7 pairs). The first commit is a one-off by nature: its baseline is the median of the next 7.

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

from _util import disk_size, interleaved, report
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
        sid = "s20261130old"
        # the same branch in the current layout, written by the store itself
        current = SessionStore(Path(tmp) / "current")
        copy = current.create_session(title="current layout", workspace=tmp)
        for node in SessionStore(home).get_branch(sid):
            current.append(copy, node, advance_head=True)
        current.commit_turn(copy, "bench: the same branch")
        read_old, read_new = interleaved(lambda: SessionStore(home).get_branch(sid),
                                         lambda: SessionStore(current.home).get_branch(copy),
                                         pairs=7)
        store = SessionStore(home)

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
        report("read the whole branch of the old session (fresh store)", read_old, read_new,
               target="baseline = the same branch in the current layout; A B A B, median of 7")
        after, again = interleaved(lambda: SessionStore(home).get_branch(sid),
                                   lambda: SessionStore(current.home).get_branch(copy), pairs=7)
        report("  the same read after the upgrade", after, again,
               target="baseline = the current-layout copy; A B A B, median of 7")


if __name__ == "__main__":
    main()
