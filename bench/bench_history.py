"""Paged reads over stdio, each beside a bare pygls server sending the same payload (A B A B).

1. ``openprogram/history`` first page (200 nodes) of a 10,000-node session, warm
   (targets: <= 20 ms, <= 1.5x the bare server);
2. ``openprogram/sessions`` first page (50) with 1,000 sessions, vs the bare server;
3. the same history page cold: the first request of a freshly started server vs the first
   request of a freshly started bare server (each once idle: its start's warm-up done;
   ``--at-once``: right after its first answer), a new pair of servers each; ours once with the
   page the warm server kept (``store/page_snapshot.py``) and once with it removed (the log's
   tail and the page's node files), A B C A B C ...;
4. RSS the server gains by that first page, median over the cold starts (target <= 15 MB);
5. ``openprogram/sessions`` cold: the first request of a fresh server once it is idle (built,
   its warm-up done: ``_idle``), all 1,000 sessions (``{}``, what the editors ask) and the
   first 50, against a fresh bare server's first answer with the same payload, A B A B
   (targets: <= 20 ms, <= 1.5x). A server reads the listing in its warm-up
   (``dispatcher/warmup.py``), so the store's cold read is shown apart: a fresh process
   reading it on its first ``session_page``.

The session is built with the store directly (10,000 nodes, one commit); the bare server is a
pygls ``LanguageServer`` answering the same methods, with the same params, with the payloads
captured from ours (same method names: the client decodes both answers the same way).
Run: ``.venv/bin/python bench/bench_history.py [--nodes N] [--sessions N] [--pairs N]
[--reuse DIR] [--only sessions]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from bench_lsp import _start
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.page_snapshot import SNAPSHOT
from openprogram_lsp.store.session_store import SessionStore

BARE = textwrap.dedent("""
    import json, sys
    from pygls.lsp.server import LanguageServer
    payloads = json.load(open(sys.argv[1]))
    server = LanguageServer("bare", "0")

    # the same method names as ours, so the client decodes both answers alike
    @server.feature("openprogram/history")
    def history(ls, params):
        return payloads["history"]

    @server.feature("openprogram/sessions")
    def sessions(ls, params):  # ours' answers, by the limit that asked for them
        return payloads["sessions"][str(getattr(params, "limit", None))]

    server.start_io()
""")


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _build(home: Path, ws: Path, nodes: int, sessions: int) -> str:
    store = SessionStore(home)
    sid = store.create_session(title="long", workspace=str(ws))
    pred = None
    for i in range(nodes):
        role = "user" if i % 2 == 0 else "assistant"
        pred = store.append(sid, Node(id=f"n{i:05d}", role=role, text=f"message {i} " * 8,
                                      predecessor=pred, status="done"),
                            advance_head=True).id
    store.commit_turn(sid, "bench: long session")
    for n in range(sessions - 1):
        store.create_session(title=f"s{n}", workspace=str(ws))
    return sid


async def _pairs(ours: Any, bare: Any, method: str, params: dict[str, Any], bare_method: str,
                 pairs: int) -> tuple[float, float]:
    async def one(client: Any, m: str, p: dict[str, Any]) -> float:
        t = time.perf_counter()
        await client.protocol.send_request_async(m, p)
        return time.perf_counter() - t

    await one(ours, method, params)
    await one(bare, bare_method, params)
    a, b = [], []
    for _ in range(max(7, pairs)):
        a.append(await one(ours, method, params))
        b.append(await one(bare, bare_method, params))
    return statistics.median(a), statistics.median(b)


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


async def _idle(pid: int, quiet: float = 0.5, timeout: float = 30.0) -> float:
    """Wait until the process used no CPU for ``quiet`` seconds (at most ``timeout``);
    returns the seconds waited."""
    t0 = time.perf_counter()
    last, since = _cpu_ticks(pid), time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        await asyncio.sleep(0.1)
        now = _cpu_ticks(pid)
        if now != last:
            last, since = now, time.perf_counter()
        elif time.perf_counter() - since >= quiet:
            break
    return time.perf_counter() - t0


async def _stop(client: Any) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def _sched_ns(pid: int) -> tuple[int, int]:
    """(CPU time, time waiting in the run queue) of every thread of a process so far
    (``schedstat``: ns, not clock ticks)."""
    cpu = wait = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):  # a thread that ended
            fields = (task / "schedstat").read_text().split()
            cpu, wait = cpu + int(fields[0]), wait + int(fields[1])
    return cpu, wait


async def _first_page(cmd: list[str], env: dict[str, str], ws: Path | None,
                      sid: str) -> tuple[float, float, float, float]:
    """(round trip, the server's CPU in it, RSS it added, the server's time waiting for a CPU
    in it) of a fresh server's first history page, after the same ``initialized`` and one
    ``sessions`` request, once the server is idle (``IDLE_FIRST``: its warm-up done)."""
    client = await _start(cmd, env, ws)
    try:
        pid = client._server.pid
        await client.protocol.send_request_async("openprogram/sessions", {"limit": 1})
        if IDLE_FIRST:
            await _idle(pid)
        rss, (cpu, wait) = _rss_kb(pid), _sched_ns(pid)
        t = time.perf_counter()
        await client.protocol.send_request_async("openprogram/history", {"sessionId": sid})
        took = time.perf_counter() - t
        cpu_after, wait_after = _sched_ns(pid)
        return (took, (cpu_after - cpu) / 1e9, (_rss_kb(pid) - rss) * 1024.0,
                (wait_after - wait) / 1e9)
    finally:
        await _stop(client)


IDLE_FIRST = True
"""Cold pages are read once the fresh server is idle (``--at-once``: right after its first
answer, while its warm-up runs beside the read)."""


async def _cold_pairs(cmd: list[str], env: dict[str, str], ws: Path, bare_cmd: list[str],
                      sid: str, pairs: int, kept: Path,
                      keep: bytes) -> dict[str, list[tuple[float, float, float, float]]]:
    """Fresh servers' first history page: ours answering from the kept page (A), the bare
    server (B), ours with the kept page removed (C), A B C A B C ..."""
    out: dict[str, list[tuple[float, float, float, float]]] = {
        "kept": [], "bare": [], "none": []}
    for _ in range(max(7, pairs)):
        kept.write_bytes(keep)  # the page the last server kept (a C run may have dropped it)
        out["kept"].append(await _first_page(cmd, env, ws, sid))
        out["bare"].append(await _first_page(bare_cmd, dict(os.environ), None, sid))
        kept.unlink(missing_ok=True)
        out["none"].append(await _first_page(cmd, env, ws, sid))
    return out


async def _first_sessions(cmd: list[str], env: dict[str, str], ws: Path | None,
                          params: dict[str, Any]) -> float:
    """Round trip of a fresh server's first ``openprogram/sessions``, once it is idle."""
    client = await _start(cmd, env, ws)
    try:
        await _idle(client._server.pid)
        t = time.perf_counter()
        await client.protocol.send_request_async("openprogram/sessions", params)
        return time.perf_counter() - t
    finally:
        await _stop(client)


async def _cold_sessions(cmd: list[str], env: dict[str, str], ws: Path, bare_cmd: list[str],
                         pairs: int, params: dict[str, Any]) -> tuple[float, float]:
    """Median first ``sessions`` answer of fresh servers, ours and bare, A B A B ..."""
    ours: list[float] = []
    bare: list[float] = []
    for _ in range(max(7, pairs)):
        ours.append(await _first_sessions(cmd, env, ws, params))
        bare.append(await _first_sessions(bare_cmd, dict(os.environ), None, params))
    return statistics.median(ours), statistics.median(bare)


async def _kept_page(path: Path, timeout: float = 30.0) -> bytes:
    """The first page the warm server kept (its background thread writes it after a read)."""
    for _ in range(int(timeout / 0.05)):
        if path.exists():
            return path.read_bytes()
        await asyncio.sleep(0.05)
    raise SystemExit(f"no kept page at {path} after {timeout} s")


async def main(nodes: int, sessions: int, pairs: int, reuse: Path | None,
               only: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = reuse or Path(tmp)
        ws, home = root / "ws", root / "home"
        made = root / f"session-{nodes}-{sessions}"  # the built session's id (--reuse)
        if made.exists():
            sid = made.read_text()
            (home / "sessions" / sid / ".git" / SNAPSHOT).unlink(missing_ok=True)
        else:
            ws.mkdir(parents=True)
            t0 = time.perf_counter()
            sid = _build(home, ws, nodes, sessions)
            report(f"build {nodes} nodes and {sessions} sessions (setup)",
                   time.perf_counter() - t0, unit="s")
            made.write_text(sid)
        env = {**os.environ, "OPENPROGRAM_HOME": str(home), "OPENPROGRAM_MODEL": "offline"}
        cmd = [sys.executable, "-m", "openprogram_lsp", "serve"]
        ours = await _start(cmd, env, ws)
        page = await ours.protocol.send_request_async("openprogram/history", {"sessionId": sid})
        listing = await ours.protocol.send_request_async("openprogram/sessions", {"limit": 50})
        everyone = await ours.protocol.send_request_async("openprogram/sessions", {})
        one = await ours.protocol.send_request_async("openprogram/sessions", {"limit": 1})
        kept = home / "sessions" / sid / ".git" / SNAPSHOT
        keep = await _kept_page(kept)  # before the warm figures: it is written in the background
        payloads = root / "payloads.json"
        payloads.write_text(json.dumps({"history": _plain(page), "sessions": {
            "50": _plain(listing), "None": _plain(everyone), "1": _plain(one)}}))
        script = root / "bare.py"
        script.write_text(BARE)
        bare_cmd = [sys.executable, str(script), str(payloads)]
        bare = await _start(bare_cmd, dict(os.environ))
        shown = len(_plain(page)["nodes"])
        if only == "sessions":
            await _stop(ours)
            await _stop(bare)
            await _report_cold_sessions(cmd, env, ws, bare_cmd, pairs, sessions)
            return
        try:
            a, b = await _pairs(ours, bare, "openprogram/history", {"sessionId": sid},
                                "openprogram/history", pairs)
            report(f"history first page ({shown} nodes), warm", a, b,
                   target="<= 20 ms, <= 1.5x; baseline = bare pygls, same page")
            a, b = await _pairs(ours, bare, "openprogram/sessions", {"limit": 50},
                                "openprogram/sessions", pairs)
            report(f"sessions first page (50 of {sessions})", a, b,
                   target="baseline = bare pygls, same payload")
        finally:
            for client in (ours, bare):
                await _stop(client)
        runs = await _cold_pairs(cmd, env, ws, bare_cmd, sid, pairs, kept, keep)

        def med(key: str, field: int) -> float:
            return statistics.median(r[field] for r in runs[key])

        report(f"history first page, {nodes}-node session, cold (kept page)", med("kept", 0),
               med("bare", 0),
               target="<= 1.5x; baseline = a fresh bare pygls server's first answer, same page")
        report(f"history first page, {nodes}-node session, cold (no kept page)", med("none", 0),
               med("bare", 0), target="the log's tail and the page's files; same baseline")
        report("  server CPU in it (all threads), kept page", med("kept", 1), med("bare", 1),
               target="baseline = the bare server's CPU for its answer")
        report("  server CPU in it (all threads), no kept page", med("none", 1), med("bare", 1),
               target="same baseline")
        report("  server waiting for a CPU in it, kept page", med("kept", 3), med("bare", 3),
               target="baseline = the bare server's; run-queue time, all threads")
        report("  server waiting for a CPU in it, no kept page", med("none", 3), med("bare", 3),
               target="same baseline")
        report(f"RSS added by the first page of a {nodes}-node session (kept page)",
               med("kept", 2), unit="MB", target="<= 15 MB")
        report(f"RSS added by the first page of a {nodes}-node session (no kept page)",
               med("none", 2), unit="MB", target="<= 15 MB")
        await _report_cold_sessions(cmd, env, ws, bare_cmd, pairs, sessions)


STORE_COLD = """
import sys, time
from pathlib import Path
import openprogram_lsp.app, openprogram_lsp.lsp.server  # what a built server has loaded
from openprogram_lsp.store.session_store import SessionStore
store = SessionStore(Path(sys.argv[1]))
t = time.perf_counter()
store.session_page(limit=None if sys.argv[2] == "None" else int(sys.argv[2]))
print(time.perf_counter() - t)
"""


def _store_cold(home: Path, limit: int | None, runs: int) -> float:
    """The store's part of a cold listing: a fresh process that has imported what a server
    has, reading ``sessions/.listing`` on its first ``session_page`` (median of ``runs``)."""
    out = [float(subprocess.run([sys.executable, "-c", STORE_COLD, str(home), str(limit)],
                                capture_output=True, text=True, check=True).stdout)
           for _ in range(max(7, runs))]
    return statistics.median(out)


async def _report_cold_sessions(cmd: list[str], env: dict[str, str], ws: Path,
                                bare_cmd: list[str], pairs: int, sessions: int) -> None:
    for params, what in (({}, f"all {sessions}"), ({"limit": 50}, f"50 of {sessions}")):
        a, b = await _cold_sessions(cmd, env, ws, bare_cmd, pairs, params)
        report(f"sessions cold ({what}): a fresh server's first request, once idle", a, b,
               target="<= 20 ms, <= 1.5x; baseline = a fresh bare pygls server, same payload")
        report("  the store's cold read of it in a fresh process (no server, no baseline)",
               _store_cold(Path(env["OPENPROGRAM_HOME"]), params.get("limit"), pairs),
               target="what the warm-up reads ahead; a request arriving first pays it")


def _plain(value: Any) -> Any:
    """A pygls result object as plain JSON data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "__dict__") and not isinstance(value, str | int | float | bool):
        return {k: _plain(v) for k, v in vars(value).items()}
    return value


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--sessions", type=int, default=1_000)
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--reuse", type=Path, default=None,
                    help="build the session in this directory once and reuse it after")
    ap.add_argument("--at-once", action="store_true",
                    help="cold history pages right after the first answer, not once idle")
    ap.add_argument("--only", choices=["sessions"], default=None,
                    help="only the cold sessions figure (after the same setup)")
    args = ap.parse_args()
    IDLE_FIRST = not args.at_once
    asyncio.run(main(args.nodes, args.sessions, args.pairs, args.reuse, args.only))
