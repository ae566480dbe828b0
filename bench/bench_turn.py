"""Turn cost against the session's length, and one turn against one git commit (A B A B ...).

Figures (each beside a baseline timed in the same run, interleaved, median of 9 pairs):

- turn N+1 of an N-turn session vs turn 2 of a fresh session (targets: <= 1.3x at 10,000 turns,
  <= 1.5x at 20,000); N from ``BENCH_TURNS`` (default ``1000,10000``);
- one offline turn that writes one file (checkpoint included) vs one bare
  ``git add f && git commit`` in a temp repository (target <= 1.0x);
- the session's ``.git`` size after the longest run, and the bytes of its ContextCommits.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import interleaved, report
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.store.git import git_env
from openprogram_lsp.store.session_repo import wait_for_maintenance


def _size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def _contexts(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*.context.json"))


def main() -> None:
    sizes = [int(n) for n in os.environ.get("BENCH_TURNS", "1000,10000").split(",") if n]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        d = build_dispatcher(AppConfig(workspace=ws, home=root / "home", model="offline",
                                       permission_mode="bypass"))
        store = d.services.store
        long_sid = d.process_user_turn(TurnRequest(text="hello")).session_id
        done = 1
        for n in sorted(sizes):
            t0 = time.perf_counter()
            while done < n:
                d.process_user_turn(TurnRequest(text="hello", session_id=long_sid))
                done += 1
                if done in (500, 1000, 1500, 2000, 2500):
                    wait_for_maintenance()
                    report(f"session .git after {done} turns of 'hello' (MB)",
                           _size(store.session_dir(long_sid) / ".git") / 1e9, unit="s",
                           target="<= 20 MB at 2,500; figure printed in MB as 's'")
            report(f"grow the session to {n} turns (setup)", time.perf_counter() - t0, unit="s")

            def long_turn() -> None:
                d.process_user_turn(TurnRequest(text="hello", session_id=long_sid))

            def second_turn() -> None:
                sid = d.process_user_turn(TurnRequest(text="hello")).session_id
                t = time.perf_counter()
                d.process_user_turn(TurnRequest(text="hello", session_id=sid))
                second_turn.elapsed = time.perf_counter() - t  # type: ignore[attr-defined]

            a: list[float] = []
            b: list[float] = []
            for _ in range(9):
                t = time.perf_counter()
                long_turn()
                a.append(time.perf_counter() - t)
                second_turn()
                b.append(second_turn.elapsed)  # type: ignore[attr-defined]
            done += 9
            a.sort()
            b.sort()
            target = "<= 1.3x" if n <= 10_000 else "<= 1.5x"
            report(f"turn {n + 1} vs turn 2 of a fresh session", a[4], b[4], target=target)
        wait_for_maintenance()
        sroot = store.session_dir(long_sid)
        report(f"session .git after {done} turns (MB)", _size(sroot / ".git") / 1e9, unit="s",
               target="printed in MB as 's'")
        report(f"ContextCommits after {done} turns (MB)", _contexts(sroot) / 1e9, unit="s",
               target="linear in turns")

        counter = iter(range(10**9))
        env = git_env()
        repo = root / "bare"
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        sid = d.process_user_turn(TurnRequest(text="hello")).session_id

        def write_turn() -> None:
            d.process_user_turn(TurnRequest(text=f"write f.txt version {next(counter)}",
                                            session_id=sid))

        def bare_commit() -> None:
            (repo / "f").write_text(str(next(counter)))
            subprocess.run(["git", "-C", str(repo), "add", "f"], check=True, env=env)
            subprocess.run(["git", "-C", str(repo), "-c", "user.name=b", "-c",
                            "user.email=b@b", "commit", "-qm", "m"], check=True, env=env,
                           stdout=subprocess.DEVNULL)

        figure, baseline = interleaved(write_turn, bare_commit, pairs=9)
        report("offline turn writing one file (checkpointed)", figure, baseline,
               target="<= 1.0x; baseline = git add f && git commit in a temp repo")


if __name__ == "__main__":
    main()
