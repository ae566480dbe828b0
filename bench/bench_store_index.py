"""The store's derived index, today's files (F: node logs, ``.listing``) against one SQLite
database per state root (S: ``store/state_db.py``), every figure in the same run, A B A B:

- ``servers``: fresh servers' first ``openprogram/sessions`` page (50 of 1,000 sessions) and
  first history page (200 nodes of a 10,000-node session, with and without the kept page),
  F S bare F S bare ..., median of ``--pairs``; then warm pages on one server of each;
- ``open``: opening the 10,000-node session's index in process (F S F S ...);
- ``turns``: turn 10,001 of a 10,000-turn session vs turn 2 of a fresh one, in each (the
  synthetic session of ``bench_turn``), F S F S ...;
- ``size``: ``--size-turns`` real offline turns in one session of each, alternating; the
  session's ``.git`` and the derived index's bytes (F: its node log, inside ``.git``; S: the
  database and its WAL, outside it).

Run: ``.venv/bin/python bench/bench_store_index.py [servers open turns size] [--pairs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _util import disk_size, offline_dispatcher, report
from bench_history import BARE, _build, _plain, _rss_kb, _stop
from bench_lsp import _start
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.store import state_db
from openprogram_lsp.store.index import SessionIndex
from openprogram_lsp.store.page_snapshot import SNAPSHOT
from openprogram_lsp.store.session_repo import wait_for_maintenance
from openprogram_lsp.store.session_store import SessionStore

SERVE = ("import runpy, sys; from openprogram_lsp.store import state_db; state_db.USE = {use}; "
         "sys.argv = ['openprogram_lsp', 'serve']; "
         "runpy.run_module('openprogram_lsp', run_name='__main__', alter_sys=True)")
MODES = {"F": False, "S": True}


def _cmd(use: bool) -> list[str]:
    return [sys.executable, "-c", SERVE.format(use=use)]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    return {**env, "OPENPROGRAM_HOME": str(home), "OPENPROGRAM_MODEL": "offline"}


def _with(use: bool, fn: Callable[[], Any]) -> Any:
    state_db.USE = use
    try:
        return fn()
    finally:
        state_db.USE = False


async def _fresh(cmd: list[str], env: dict[str, str], ws: Path | None,
                 sid: str) -> tuple[float, float, float]:
    """(first sessions page, first history page, RSS the page added) of a fresh server."""
    client = await _start(cmd, env, ws)
    try:
        t = time.perf_counter()
        await client.protocol.send_request_async("openprogram/sessions", {"limit": 50})
        sessions = time.perf_counter() - t
        rss = _rss_kb(client._server.pid)
        t = time.perf_counter()
        await client.protocol.send_request_async("openprogram/history", {"sessionId": sid})
        history = time.perf_counter() - t
        return sessions, history, (_rss_kb(client._server.pid) - rss) * 1024.0
    finally:
        await _stop(client)


async def _kept(path: Path) -> bytes:
    for _ in range(600):
        if path.exists():
            return path.read_bytes()
        await asyncio.sleep(0.05)
    raise SystemExit(f"no kept page at {path}")


async def servers(root: Path, pairs: int) -> None:
    ws, homes = root / "ws", {"F": root / "home-F", "S": root / "home-S"}
    ws.mkdir()
    t0 = time.perf_counter()
    sid = _build(homes["F"], ws, 10_000, 1_000)
    shutil.copytree(homes["F"], homes["S"], symlinks=True)
    # S's database as a server finds it after its first use: built once from the files
    _with(True, lambda: (SessionStore(homes["S"]).list_sessions(),
                         SessionStore(homes["S"]).index(sid)))
    report("build 10,000 nodes and 1,000 sessions, both homes (setup)",
           time.perf_counter() - t0, unit="s")
    keep: dict[str, bytes] = {}
    warm: dict[str, Any] = {}
    for mode, home in homes.items():
        client = warm[mode] = await _start(_cmd(MODES[mode]), _env(home), ws)
        page = await client.protocol.send_request_async("openprogram/history", {"sessionId": sid})
        listing = await client.protocol.send_request_async("openprogram/sessions", {"limit": 50})
        keep[mode] = await _kept(home / "sessions" / sid / ".git" / SNAPSHOT)
    payloads = root / "payloads.json"
    payloads.write_text(json.dumps({"history": _plain(page), "sessions": _plain(listing)}))
    (root / "bare.py").write_text(BARE)
    bare_cmd = [sys.executable, str(root / "bare.py"), str(payloads)]
    warm["bare"] = await _start(bare_cmd, dict(os.environ))
    for method, params in (("openprogram/history", {"sessionId": sid}),
                           ("openprogram/sessions", {"limit": 50})):
        times: dict[str, list[float]] = {k: [] for k in warm}
        for n in range(max(7, pairs) + 1):
            for key, client in warm.items():
                t = time.perf_counter()
                await client.protocol.send_request_async(method, params)
                if n:
                    times[key].append(time.perf_counter() - t)
        bare = statistics.median(times["bare"])
        for mode in homes:
            report(f"{method[12:]} warm, {mode}", statistics.median(times[mode]), bare,
                   target="baseline = bare pygls")
    for client in warm.values():
        await _stop(client)
    runs: dict[str, list[tuple[float, float, float]]] = {
        k: [] for k in ("F", "S", "bare", "F none", "S none")}
    for _ in range(max(7, pairs)):
        for mode, home in homes.items():
            (home / "sessions" / sid / ".git" / SNAPSHOT).write_bytes(keep[mode])
            runs[mode].append(await _fresh(_cmd(MODES[mode]), _env(home), ws, sid))
        runs["bare"].append(await _fresh(bare_cmd, dict(os.environ), None, sid))
        for mode, home in homes.items():
            (home / "sessions" / sid / ".git" / SNAPSHOT).unlink(missing_ok=True)
            runs[f"{mode} none"].append(await _fresh(_cmd(MODES[mode]), _env(home), ws, sid))

    def med(key: str, field: int) -> float:
        return statistics.median(r[field] for r in runs[key])

    for mode in homes:
        report(f"sessions cold (50 of 1,000), {mode}", med(mode, 0), med("bare", 0),
               target="<= 20 ms, <= 1.5x; baseline = a fresh bare pygls server")
    for mode in homes:
        report(f"sessions cold, {mode}, second set of servers", med(f"{mode} none", 0),
               med("bare", 0), target="same baseline")
    for mode in homes:
        report(f"history cold, kept page, {mode}", med(mode, 1), med("bare", 1),
               target="<= 1.5x; baseline = a fresh bare pygls server")
    for mode in homes:
        report(f"history cold, no kept page, {mode}", med(f"{mode} none", 1), med("bare", 1),
               target="same baseline")
    for mode in homes:
        report(f"RSS added by the cold page (no kept page), {mode}", med(f"{mode} none", 2),
               unit="MB", target="<= 15 MB")


def open_index(root: Path, pairs: int) -> None:
    home = root / "home"
    sid = _build(home, root, 10_000, 1)
    sroot = home / "sessions" / sid
    _with(True, lambda: SessionIndex.load(sroot))  # S's rows, built once
    times: dict[bool, list[float]] = {False: [], True: []}
    for n in range(max(7, pairs) + 1):
        for use in (False, True):
            t = time.perf_counter()
            _with(use, lambda: SessionIndex.load(sroot))
            if n:
                times[use].append(time.perf_counter() - t)
    report("open a 10,000-node index, S vs F", statistics.median(times[True]),
           statistics.median(times[False]), target="baseline = the node log")


def turns(root: Path, pairs: int, n: int) -> None:
    from bench_turn import _synthetic

    ds: dict[bool, Any] = {}
    sids: dict[bool, str] = {}
    for use in (False, True):
        (root / str(use)).mkdir()
        d, ws = _with(use, lambda: offline_dispatcher(
            root / str(use), permission_mode="bypass"))  # noqa: B023
        ds[use] = d
        sids[use] = _with(use, lambda: _synthetic(d.services.store, n, ws))  # noqa: B023
        wait_for_maintenance(timeout=600)

    def turn(use: bool, sid: str | None) -> float:
        t = time.perf_counter()
        _with(use, lambda: ds[use].process_user_turn(TurnRequest(text="hello", session_id=sid)))
        return time.perf_counter() - t

    def second(use: bool) -> float:
        fresh = _with(use, lambda: ds[use].process_user_turn(TurnRequest(text="hello"))
                      ).session_id
        return turn(use, fresh)

    out: dict[tuple[bool, str], list[float]] = {}
    for k in range(max(7, pairs) + 1):
        for use in (False, True):
            long, short = turn(use, sids[use]), second(use)
            if k:
                out.setdefault((use, "long"), []).append(long)
                out.setdefault((use, "short"), []).append(short)
    for use, mode in ((False, "F"), (True, "S")):
        report(f"turn {n + 2} vs turn 2, {mode}", statistics.median(out[(use, "long")]),
               statistics.median(out[(use, "short")]), target="<= 1.3x")
    report(f"turn {n + 2}, S vs F", statistics.median(out[(True, "long")]),
           statistics.median(out[(False, "long")]), target="baseline = the node log")


def size(root: Path, n: int) -> None:
    ds: dict[bool, Any] = {}
    sids: dict[bool, str] = {}
    for use in (False, True):
        (root / str(use)).mkdir()
        d, _ = _with(use, lambda: offline_dispatcher(
            root / str(use), permission_mode="bypass"))  # noqa: B023
        ds[use] = d
    for k in range(n):
        for use in (False, True):
            sid = _with(use, lambda: ds[use].process_user_turn(  # noqa: B023
                TurnRequest(text="hello", session_id=sids.get(use))).session_id)  # noqa: B023
            sids[use] = sid
        if (k + 1) % 500 == 0:
            print(f"  {k + 1} turns", flush=True)
    wait_for_maintenance(600)
    git = {u: disk_size(ds[u].services.store.session_dir(sids[u]) / ".git") for u in ds}
    report(f"session .git after {n} turns, S vs F", git[True], git[False], unit="MB",
           target="<= 20 MB at 2,500")
    log = ds[False].services.store.session_dir(sids[False]) / ".git" / "openprogram-nodes"
    sessions = ds[True].services.store.root
    db = sum(p.stat().st_size for p in sessions.iterdir()
             if p.name.startswith(state_db.DB_NAME))
    report("derived index bytes, S (database + WAL) vs F (node log + listing)", db,
           log.stat().st_size + (ds[False].services.store.root / ".listing").stat().st_size,
           unit="MB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("parts", nargs="*", default=["servers", "open", "turns", "size"])
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--size-turns", type=int, default=2_500)
    args = ap.parse_args()
    for part in args.parts:
        with tempfile.TemporaryDirectory() as tmp:
            print(f"-- {part} (load {os.getloadavg()[0]:.1f})", flush=True)
            if part == "servers":
                asyncio.run(servers(Path(tmp), args.pairs))
            elif part == "open":
                open_index(Path(tmp), args.pairs)
            elif part == "turns":
                turns(Path(tmp), args.pairs, args.turns)
            elif part == "size":
                size(Path(tmp), args.size_turns)
            print(f"-- end of {part} (load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
