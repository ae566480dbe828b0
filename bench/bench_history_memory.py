"""Memory a long history read costs the server, beside a bare pygls server sending the same
payload, fresh servers each round, A B A B (median of ``--rounds``, default 7).

1. ``openprogram/history`` with ``limit: 10000`` on a 10,000-node session (nodes of ~850
   characters): RSS added by the answer (target <= 1.5x the bare server's for the same
   answer), how soon it is back within 5 MB of the start (target <= 5 s) and where it is
   5 s after the read;
2. the same with the whole branch paged 200 at a time (``beforeNodeId``): RSS added
   (target <= 15 MB), beside the bare server sending the same 50 pages.

Each server's start RSS is taken once it is idle (``_idle``: no CPU used for 0.5 s): a fresh
server builds its first turn's validators after ``initialized`` (``dispatcher/warmup.py``,
some 4-5 MB), which is the start's memory, not the read's; read at a fixed 0.3 s it fell inside
the figure or not depending on the load.

Run: ``.venv/bin/python bench/bench_history_memory.py [--rounds N] [--reuse DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from bench_history import _idle, _plain, _rss_kb, _stop
from bench_lsp import _start
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.page_snapshot import SNAPSHOT
from openprogram_lsp.store.session_store import SessionStore

BARE = textwrap.dedent("""
    import json, sys
    from pygls.lsp.server import LanguageServer
    pages = json.load(open(sys.argv[1]))
    server = LanguageServer("bare", "0")

    @server.feature("openprogram/history")  # ours' answers, by the params that asked for them
    def history(ls, params):
        before = getattr(params, "beforeNodeId", None) or ""
        return pages[before][str(params.limit)]

    server.start_io()
""")


def _build(home: Path, ws: Path, nodes: int) -> str:
    store = SessionStore(home)
    sid = store.create_session(title="long", workspace=str(ws))
    pred = None
    for i in range(nodes):
        role = "user" if i % 2 == 0 else "assistant"
        pred = store.append(sid, Node(id=f"n{i:05d}", role=role, text=f"message {i}: " +
                                      "lorem ipsum dolor sit amet, " * 30,
                                      predecessor=pred, status="done"),
                            advance_head=True).id
    store.commit_turn(sid, "bench: long session")
    return sid


async def _read(client: Any, sid: str, limit: int,
                before: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": sid, "limit": limit}
    if before:
        params["beforeNodeId"] = before
    return _plain(await asyncio.wait_for(
        client.protocol.send_request_async("openprogram/history", params), 120))


async def _all_pages(client: Any, sid: str) -> list[tuple[str | None, dict[str, Any]]]:
    out: list[tuple[str | None, dict[str, Any]]] = []
    before: str | None = None
    for _ in range(10_000):
        page = await _read(client, sid, 200, before)
        out.append((before, page))
        if not page["hasMore"] or not page["nodes"]:
            break
        before = page["nodes"][0]["id"]
    return out


async def _settle(pid: int, start_kb: int, within_kb: int, timeout: float) -> tuple[float, int]:
    """Seconds until RSS is within ``within_kb`` of ``start_kb`` (or ``timeout``), and the
    RSS then."""
    t0 = time.perf_counter()
    while True:
        rss = _rss_kb(pid)
        took = time.perf_counter() - t0
        if rss - start_kb <= within_kb or took >= timeout:
            return took, rss
        await asyncio.sleep(0.1)


async def main(rounds: int, nodes: int, reuse: Path | None) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        root = reuse or Path(tmp)
        ws, home = root / "ws", root / "home"
        made = root / f"memory-session-{nodes}"
        if made.exists():
            sid = made.read_text()
        else:
            ws.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            sid = _build(home, ws, nodes)
            report(f"build a {nodes}-node session (setup)", time.perf_counter() - t0, unit="s")
            made.write_text(sid)
        env = {**os.environ, "OPENPROGRAM_HOME": str(home), "OPENPROGRAM_MODEL": "offline"}
        kept = home / "sessions" / sid / ".git" / SNAPSHOT
        cmd = [sys.executable, "-m", "openprogram_lsp", "serve"]
        # ours' answers, for the bare server to send as they are
        probe = await _start(cmd, env, ws)
        big = await _read(probe, sid, 10_000)
        pages = await _all_pages(probe, sid)
        await _stop(probe)
        answers: dict[str, dict[str, Any]] = {"": {"10000": big}}
        for before, page in pages:
            answers.setdefault(before or "", {})["200"] = page
        payload = root / "answers.json"
        payload.write_text(json.dumps(answers))
        script = root / "bare_memory.py"
        script.write_text(BARE)
        bare_cmd = [sys.executable, str(script), str(payload)]
        size = len(json.dumps(big))
        print(f"limit 10000 answer: {len(big['nodes'])} nodes, {size / 1e6:.2f} MB, hasMore "
              f"{big['hasMore']}; paging: {len(pages)} pages of 200")

        big_ours: list[float] = []
        big_bare: list[float] = []
        back: list[float] = []
        left: list[float] = []
        at5: list[float] = []
        paged_ours: list[float] = []
        paged_bare: list[float] = []
        for _ in range(max(7, rounds)):
            for which in ("ours", "bare"):
                kept.unlink(missing_ok=True)  # ours builds the answer (no page kept on disk)
                client = await _start(cmd if which == "ours" else bare_cmd,
                                      env if which == "ours" else dict(os.environ),
                                      ws if which == "ours" else None)
                pid = client._server.pid
                await _idle(pid)  # the server's start (its warm-up) is done
                rss0 = _rss_kb(pid)
                await _read(client, sid, 10_000)
                added = (_rss_kb(pid) - rss0) * 1024.0
                if which == "ours":
                    took, rss = await _settle(pid, rss0, 5 * 1024, 5.0)
                    big_ours.append(added)
                    back.append(took)
                    left.append((rss - rss0) * 1024.0)
                    await asyncio.sleep(max(0.0, 5.0 - took))  # what stays (the keeper's too)
                    at5.append((_rss_kb(pid) - rss0) * 1024.0)
                else:
                    big_bare.append(added)
                await _stop(client)
                client = await _start(cmd if which == "ours" else bare_cmd,
                                      env if which == "ours" else dict(os.environ),
                                      ws if which == "ours" else None)
                pid = client._server.pid
                await _idle(pid)
                kept.unlink(missing_ok=True)
                rss0 = _rss_kb(pid)
                await _all_pages(client, sid)
                (paged_ours if which == "ours" else paged_bare).append(
                    (_rss_kb(pid) - rss0) * 1024.0)
                await _stop(client)
        med = statistics.median
        report("RSS added by history limit=10000", med(big_ours), med(big_bare), unit="MB",
               target="<= 1.5x; baseline = bare pygls sending the same answer")
        report("  RSS above the start 5 s later (or when back within 5 MB)", med(left),
               unit="MB", target="<= 5 MB")
        report("  seconds until back within 5 MB", med(back), unit="s", target="<= 5 s")
        report("  RSS above the start 5 s after the read", med(at5), unit="MB",
               target="<= 5 MB (what stays: caches, the kept page's work, the heap)")
        report(f"RSS added by paging the whole branch ({len(pages)} x 200)", med(paged_ours),
               med(paged_bare), unit="MB", target="<= 15 MB; baseline = bare, same pages")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--reuse", type=Path, default=None,
                    help="build the session in this directory once and reuse it after")
    args = ap.parse_args()
    asyncio.run(main(args.rounds, args.nodes, args.reuse))
