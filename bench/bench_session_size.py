"""A session's size on disk against its length: 2,500 offline turns of "hello".

At every 500 turns (after the background packing settles) it prints the session's ``.git``
(target <= 20 MB at 2,500) beside the same-run baseline of what the session's files take
themselves (its working tree without ``.git``), and the bytes of its ContextCommits with the
bytes per turn since the previous mark: "linear in turns" means that per-turn figure stays flat.
At the end, the same repository repacked by ``git gc --aggressive`` in a copy (what git itself
makes of that history) is printed beside ``.git``.

    BENCH_SIZE_TURNS=2500 python bench/bench_session_size.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import context_bytes, disk_size, offline_dispatcher, report
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.store.git import git_env
from openprogram_lsp.store.session_repo import wait_for_maintenance


def main() -> None:
    turns = int(os.environ.get("BENCH_SIZE_TURNS", "2500"))
    step = 500
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        d, _ = offline_dispatcher(root, permission_mode="bypass")
        sid = d.process_user_turn(TurnRequest(text="hello")).session_id
        sroot = d.services.store.session_dir(sid)
        done, last_ctx, t0 = 1, 0, time.perf_counter()
        while done < turns:
            d.process_user_turn(TurnRequest(text="hello", session_id=sid))
            done += 1
            if done % step == 0 or done == turns:
                wait_for_maintenance(600)
                report(f"session .git after {done} turns of 'hello'", disk_size(sroot / ".git"),
                       disk_size(sroot, skip_git=True), unit="MB",
                       target="<= 20 MB at 2,500; baseline = the session's own files")
                ctx = context_bytes(sroot)
                per_turn = (ctx - last_ctx) / step
                print(f"  ContextCommits {ctx / 1e6:.2f} MB, {per_turn:.0f} bytes per turn over "
                      f"the last {step} turns ({time.perf_counter() - t0:.0f} s so far)",
                      flush=True)
                last_ctx = ctx
        copy = root / "gc.git"
        shutil.copytree(sroot / ".git", copy)
        subprocess.run(["git", "--git-dir", str(copy), "gc", "-q", "--aggressive",
                        "--prune=now"], check=True, env=git_env())
        report(f"session .git after {done} turns vs git gc --aggressive of it",
               disk_size(sroot / ".git"), disk_size(copy), unit="MB",
               target="reported; baseline = git's own best packing of the same history")


if __name__ == "__main__":
    main()
