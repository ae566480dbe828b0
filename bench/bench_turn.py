"""Turn cost against the session's length, and one turn against one git commit (A B A B ...).

Figures (each beside a baseline timed in the same run, interleaved, median of 9 pairs):

- turn N+1 of an N-turn session vs turn 2 of a fresh session (targets: <= 1.3x at 10,000 turns,
  <= 1.5x at 20,000). Sessions of ``BENCH_TURNS`` real turns (default ``1000``), and of
  ``BENCH_SYNTH`` turns written straight to the store's layout and committed once (default
  ``10000,20000``: real turns at this machine's speed would take an hour); and of
  ``BENCH_IDLE`` synthetic turns (default ``20000``: 40,000 kept messages) whose kept history
  holds an idle gap, so every turn runs the reference scan and microcompact;
- one offline turn that writes one file (checkpoint included) vs one bare
  ``git add f && git commit`` in a temp repository (target <= 1.0x);
- the session's ``.git`` size after the longest run, and the bytes of its ContextCommits.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import context_bytes, context_record_bytes, disk_size, offline_dispatcher, report
from openprogram_lsp.core.ids import now_iso
from openprogram_lsp.core.types import Node, ToolCallRecord, TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.dispatcher.finalize import wait_for_retention
from openprogram_lsp.store import meta_slots
from openprogram_lsp.store.git import git_env
from openprogram_lsp.store.index import node_path
from openprogram_lsp.store.session_repo import SessionRepo, wait_for_maintenance
from openprogram_lsp.store.session_store import SessionStore


def _synthetic(store: SessionStore, turns: int, workspace: Path, *, idle: bool = False) -> str:
    """A session holding ``turns`` finished turns of "hello", written as the store lays them
    out (node files, meta) and committed in one commit. ``idle``: the first half three hours
    older than the rest (an idle gap in the kept history: every later turn runs the
    reference scan and microcompact), every 10th reply reading a file (a large result)."""
    sid = store.create_session(title="hello", workspace=str(workspace))
    root = store.session_dir(sid)
    pred = None
    stamp = now_iso()
    old = (datetime.fromisoformat(stamp) - timedelta(hours=3)).isoformat()
    output = "\n".join(f"line {i}: value = compute(x, {i})  # note" for i in range(60))
    for t in range(turns):
        at = old if idle and t < turns // 2 else stamp
        for k, (role, text) in enumerate((("user", "hello"), ("assistant", "Hello! (offline)"))):
            seq = 2 * t + k + 1
            nid = f"t{t:06d}{'_reply' if k else ''}"
            calls = [ToolCallRecord(id=f"c{t}", name="read_file", kind="read", step=0,
                                    input={"path": f"src/m{t}.py"}, status="completed",
                                    output=output)] if idle and k and t % 10 == 0 else None
            node = Node(id=nid, role=role, text=text, predecessor=pred, status="done",
                        created_at=at, tool_calls=calls)  # type: ignore[arg-type]
            path = root / "nodes" / node_path(seq, nid)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(node.model_dump_json(exclude_none=True))
            pred = nid
    meta = meta_slots.read(root)
    meta.update(headId=pred, updatedAt=stamp, lastTurnAt=stamp)
    meta_slots.write(root, json.dumps(meta, indent=1).encode())
    SessionRepo(root).commit("bench: synthetic history", everything=True)
    return sid


def _compare(d: Dispatcher, sid: str, label: str, target: str) -> None:
    def second_turn() -> float:
        fresh = d.process_user_turn(TurnRequest(text="hello")).session_id
        t = time.perf_counter()
        d.process_user_turn(TurnRequest(text="hello", session_id=fresh))
        return time.perf_counter() - t

    d.process_user_turn(TurnRequest(text="hello", session_id=sid))  # opens it, warms caches
    second_turn()
    a: list[float] = []
    b: list[float] = []
    last = None
    for _ in range(9):
        t = time.perf_counter()
        last = d.process_user_turn(TurnRequest(text="hello", session_id=sid))
        a.append(time.perf_counter() - t)
        b.append(second_turn())
    report(label, statistics.median(a), statistics.median(b), target=target)
    record = d.services.store.read_context_commit(sid, last.assistant_node_id) \
        if last is not None else None
    if record is not None:  # what the model was sent: the whole history, or a compacted tail
        how = "after a summary" if record.get("summaryNodeId") else "no summary"
        if record.get("protected") or record.get("replaced"):
            how += (f"; {len(record.get('replaced', []))} results cleared, "
                    f"{len(record.get('protected', []))} referenced")
        print(f"{'  messages sent on that turn':<48} {record['messages']:10d}   ({how})",
              flush=True)
        if last is not None:  # its lists maybe stored as a change from the previous record
            report("  its ContextCommit as stored vs lists in full",
                   *context_record_bytes(d.services.store, sid, last.assistant_node_id),
                   unit="B")


def main() -> None:
    sizes = [int(n) for n in os.environ.get("BENCH_TURNS", "1000").split(",") if n]
    synth = [int(n) for n in os.environ.get("BENCH_SYNTH", "10000,20000").split(",") if n]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        d, ws = offline_dispatcher(root, permission_mode="bypass")
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
                    report(f"session .git after {done} turns of 'hello'",
                           disk_size(store.session_dir(long_sid) / ".git"), unit="MB",
                           target="<= 20 MB at 2,500")
            report(f"grow the session to {n} turns (setup)", time.perf_counter() - t0, unit="s")

            target = "<= 1.3x" if n <= 10_000 else "<= 1.5x"
            _compare(d, long_sid, f"turn {n + 1} vs turn 2 of a fresh session", target)
            done += 10
        wait_for_maintenance()
        sroot = store.session_dir(long_sid)
        report(f"session .git after {done} turns", disk_size(sroot / ".git"), unit="MB")
        report(f"ContextCommits after {done} turns", context_bytes(sroot), unit="MB",
               target="linear in turns")

        idle = [int(n) for n in os.environ.get("BENCH_IDLE", "20000").split(",") if n]
        for n, gap in [*((n, False) for n in synth), *((n, True) for n in idle)]:
            t0 = time.perf_counter()
            sid = _synthetic(store, n, ws, idle=gap)
            # its one commit left every object loose at once (a real session is packed every
            # PACK_THRESHOLD objects): the background pack of setup is not a turn's cost
            wait_for_maintenance(timeout=600)
            report(f"write a {n}-turn session to the store (setup)", time.perf_counter() - t0,
                   unit="s")
            target = "<= 1.3x" if n <= 10_000 else "<= 1.5x"
            what = "after an idle gap, synthetic" if gap else "synthetic history"
            engine = d.services.context
            kept = engine.config
            if gap:  # the whole history kept (its results would pass the offline 128k window)
                engine.config = replace(kept, window_override=10_000_000)
            _compare(d, sid, f"turn {n + 2} ({what}) vs turn 2", target)
            engine.config = kept

        counter = iter(range(10**9))
        env = git_env()
        repo = root / "bare"
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        sid = d.process_user_turn(TurnRequest(text="hello")).session_id

        def write_turn() -> None:
            # the turn as its caller gets it: it returns once the reply, the checkpoint, the
            # ContextCommit, the meta and the session commit are written
            d.process_user_turn(TurnRequest(text=f"write f.txt version {next(counter)}",
                                            session_id=sid))

        def bare_commit() -> None:
            (repo / "f").write_text(str(next(counter)))
            subprocess.run(["git", "-C", str(repo), "add", "f"], check=True, env=env)
            subprocess.run(["git", "-C", str(repo), "-c", "user.name=b", "-c",
                            "user.email=b@b", "commit", "-qm", "m"], check=True, env=env,
                           stdout=subprocess.DEVNULL)

        # A B A B ..., median of 9 pairs. What runs after a turn returns (retention's check,
        # a pack merge now and then) runs on this process's background threads: it is waited
        # for after the timed turn, before git's run, so it neither overlaps git's figure nor
        # goes uncounted: the CPU figure below holds it (this process's CPU from the turn's
        # start until its background work is done; git's: both its processes).
        write_turn()
        bare_commit()
        wall: dict[str, list[float]] = {"turn": [], "git": []}
        cpu: dict[str, list[float]] = {"turn": [], "git": []}
        for _ in range(9):
            c0 = time.process_time()
            t0 = time.perf_counter()
            write_turn()
            wall["turn"].append(time.perf_counter() - t0)
            wait_for_retention()
            wait_for_maintenance()
            cpu["turn"].append(time.process_time() - c0)
            g0 = _children_cpu()
            t0 = time.perf_counter()
            bare_commit()
            wall["git"].append(time.perf_counter() - t0)
            cpu["git"].append(_children_cpu() - g0)
        report("offline turn writing one file (checkpointed)", statistics.median(wall["turn"]),
               statistics.median(wall["git"]),
               target="<= 1.0x; baseline = git add f && git commit in a temp repo")
        report("  its CPU, background work included", statistics.median(cpu["turn"]),
               statistics.median(cpu["git"]), target="baseline = git's two processes")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
