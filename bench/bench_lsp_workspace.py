"""A one-file turn over stdio LSP in a big workspace against the same turn in a 100-file one.

Two servers (the offline model, ``accept-edits``), one per workspace: 100 files, and
``BENCH_FILES`` (default ``20000``) files in 100-file folders. Each first runs one write turn
and waits for the first checkpoint walk; then the turns ``write wN.txt`` alternate between
them A B A B, median of ``--rounds`` (target <= 1.3x). The first turn's edit (from the request
to its ``tool.finished``) is reported against the second turn's edit in the same workspace
(target <= 1.5x): the first edit does not wait for the first walk, the turn's end does.

``--first N`` measures only the first edit: N fresh servers on fresh stores, one after the
other, each one's first turn's edit against its second turn's (started once the first turn
ended), A B pairs, medians: the edit tool call's own latency (its ``tool.started`` to its
``tool.finished`` as the client gets them; target <= 1.5x) and, stricter, from the chat request
(the first turn of a new session: its session made, its hooks started, its context built); the
same for a 100-file workspace alongside, and how long each first turn took. ``--idle S``: the
first chat is sent S seconds after the server answered its first request (a person opening the
chat and typing) instead of at once. ``--before SRC``: the big workspace also with another
checkout's server sources, interleaved. It also reports each first turn whole (request to
answer) against its second turn whole (target: the first turn's end does not wait for the first
walk, issue 33), and when a first turn's checkpoint was left pending, how long after the
request ``checkpoint.created`` brought it (each server is stopped only then).

Run: ``.venv/bin/python bench/bench_lsp_workspace.py [--rounds N] [--files N] [--reuse DIR]
[--first N]``
(``BENCH_PROFILE=FILE``: the big workspace's server runs under cProfile, its stats to FILE).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import BaseLanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from _util import report
from bench_lsp import _ClientProtocol


def _fill(root: Path, files: int) -> None:
    root.mkdir()
    for i in range(files):
        folder = root / f"d{i // 100:04d}"
        if i % 100 == 0:
            folder.mkdir()
        (folder / f"m{i}.py").write_text(f"x = {i}\n")


class Client(BaseLanguageClient):
    def __init__(self) -> None:
        super().__init__("bench", "0", protocol_cls=_ClientProtocol)
        self.progress_done = asyncio.Event()
        self.finished: list[float] = []  # when each tool.finished arrived
        self.started: list[float] = []  # when each tool.started arrived
        self.created: dict[str, float] = {}  # checkpoint id -> when checkpoint.created came

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def _log(params: Any) -> None:
            pass

        @self.feature("openprogram/event")
        def _event(params: Any) -> None:
            if params.get("type") == "tool.finished":
                self.finished.append(time.perf_counter())
            elif params.get("type") == "tool.started":
                self.started.append(time.perf_counter())
            elif params.get("type") == "checkpoint.created":
                self.created[str(params["data"]["id"])] = time.perf_counter()


async def _start(ws: Path, home: Path, profile: str = "", source: str = "") -> Client:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env.update(OPENPROGRAM_HOME=str(home), OPENPROGRAM_MODEL="offline")
    if source:  # another checkout's server sources (``--before``)
        env["PYTHONPATH"] = source
    client = Client()
    wrap = ["-m", "cProfile", "-o", profile] if profile else []  # BENCH_PROFILE: the big one
    await client.start_io(sys.executable, *wrap, "-m", "openprogram_lsp", "serve", env=env)
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
        initialization_options={"permissionMode": "accept-edits"}))
    client.initialized(types.InitializedParams())
    return client


async def _turn(client: Client, sid: str | None, text: str) -> tuple[float, str]:
    took, _edit, sid = await _edit_turn(client, sid, text)
    return took, sid


async def _edit_turn(client: Client, sid: str | None, text: str,
                     pending: list[tuple[str, float]] | None = None
                     ) -> tuple[float, float, str]:
    """Seconds to the turn's answer, to its first tool.finished, and the session id; a
    checkpoint left pending (``checkpointPending``) is added to ``pending`` (id, start)."""
    params: dict[str, Any] = {"text": text}
    if sid:
        params["sessionId"] = sid
    client.finished.clear()
    client.started.clear()
    t0 = time.perf_counter()
    result = await asyncio.wait_for(
        client.protocol.send_request_async("openprogram/chat", params), 600)
    took = time.perf_counter() - t0
    cid = result.get("checkpointPending")
    if result["status"] != "done" or not (result.get("checkpoint") or cid) \
            or not client.finished:
        raise SystemExit(f"turn not done with a checkpoint: {result}")
    if cid and pending is not None:
        pending.append((cid, t0))
    return took, client.finished[0] - t0, result["sessionId"]


async def _created(client: Client, cid: str) -> None:
    """Wait (at most 600 s) for the ``checkpoint.created`` of a pending checkpoint."""
    for _ in range(60000):
        if cid in client.created:
            return
        await asyncio.sleep(0.01)
    raise SystemExit(f"checkpoint {cid} was never created")


async def first_edits(rounds: int, files: int, reuse: Path | None, idle: float,
                      before: str) -> None:
    """First and second edits of fresh servers (fresh stores), ``rounds`` of each workspace
    (and of the big one with ``before``'s sources, interleaved)."""
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        small, big = tmp / "small", reuse / f"big{files}" if reuse else tmp / "big"
        _fill(small, 100)
        if not big.exists():
            _fill(big, files)
        got: dict[str, list[dict[str, Any]]] = {"big": [], "small": []}
        runs = [("big", big, ""), ("small", small, "")]
        if before:
            got["before"] = []
            runs.insert(1, ("before", big, before))
        for i in range(max(7, rounds)):
            for key, ws, source in runs:
                client = await _start(ws, tmp / f"home_{key}{i}", source=source)
                await client.protocol.send_request_async("openprogram/sessions", {})
                await asyncio.sleep(idle)
                run = f"{time.time_ns():x}"
                pending: list[tuple[str, float]] = []
                took, first, sid = await _edit_turn(client, None, f"write f{run}.txt\nfirst\n",
                                                    pending)
                call = client.finished[0] - client.started[0]  # the edit tool call's own
                took2, second, _sid = await _edit_turn(client, sid,
                                                       f"write s{run}.txt\nsecond\n")
                call2 = client.finished[0] - client.started[0]
                late = None
                for cid, t0 in pending:  # the first turn's checkpoint, committed after the walk
                    await _created(client, cid)
                    late = client.created[cid] - t0
                got[key].append({"call": (call, call2), "edit": (first, second),
                                 "turn": (took, took2), "late": late})
                await client.shutdown_async(None)
                client.exit(None)
                await client.stop()
        med = statistics.median
        for key, n in (("big", files), ("before", files), ("small", 100)):
            rows = got.get(key, [])
            if not rows:
                continue
            label = f"{n} files" + (f" ({before})" if key == "before" else "")
            for what, title, unit in (
                    ("call", f"first edit tool call (tool.started to tool.finished), {label}, "
                             f"{idle:g} s idle", "ms"),
                    ("edit", f"  the same from the chat request (its turn's start too), {label}",
                     "ms"),
                    ("turn", f"  its first turn, whole, {label}", "s")):
                report(title, med(r[what][0] for r in rows), med(r[what][1] for r in rows),
                       unit=unit, target="<= 1.5x; baseline = the second turn's"
                       if what != "turn" else "the end waits for no walk; baseline = the "
                       "second turn's")
                print("    pairs (ms): " + ", ".join(
                    f"{r[what][0] * 1e3:.0f}/{r[what][1] * 1e3:.0f}" for r in rows))
            lates = [r["late"] for r in rows if r["late"] is not None]
            print(f"  first turns left pending: {len(lates)} of {len(rows)}"
                  + (f"; checkpoint.created {med(lates):.2f} s after the request (median)"
                     if lates else ""))
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


async def main(rounds: int, files: int, reuse: Path | None) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        small, big = tmp / "small", reuse / f"big{files}" if reuse else tmp / "big"
        t0 = time.perf_counter()
        _fill(small, 100)
        if not big.exists():
            _fill(big, files)
        report(f"make the workspaces (100 and {files} files, setup)", time.perf_counter() - t0,
               unit="s")
        a = await _start(big, tmp / "home_big", os.environ.get("BENCH_PROFILE", ""))
        b = await _start(small, tmp / "home_small")
        for client in (a, b):  # the server is built after initialize: ready once it answers
            await client.protocol.send_request_async("openprogram/sessions", {})
        sids: dict[str, str | None] = {"a": None, "b": None}
        run = f"{time.time_ns():x}"  # new content each run (the big workspace may be reused)
        pending: list[tuple[str, float]] = []
        first_a, edit_a, sids["a"] = await _edit_turn(a, None, f"write w0.txt\nfirst {run}\n",
                                                      pending)
        first_b, edit_b, sids["b"] = await _edit_turn(b, None, f"write w0.txt\nfirst {run}\n")
        report(f"first write turn (first checkpoint), {files} files", first_a, first_b,
               unit="s", target="baseline = 100 files")
        for cid, t0 in pending:  # the turns below are measured with the first walk done
            await _created(a, cid)
            report(f"  its checkpoint, committed after the walk, {files} files",
                   a.created[cid] - t0, unit="s", target="none; from the request")
        _took, second_edit, sids["a"] = await _edit_turn(a, sids["a"],
                                                         f"write v0.txt\nsecond {run}\n")
        report(f"  its edit (to tool.finished), {files} files", edit_a, second_edit,
               target="<= 1.5x; baseline = the second turn's edit there")
        report(f"  its edit, {files} files vs the first edit at 100 files", edit_a, edit_b,
               target="none; the first turn of a fresh server both")
        times: dict[str, list[float]] = {"a": [], "b": []}
        for i in range(1, max(7, rounds) + 2):
            for key, client in (("a", a), ("b", b)):
                took, sids[key] = await _turn(client, sids[key],
                                              f"write w{i}.txt\nline {i} {run}\n")
                if i > 1:
                    times[key].append(took)
        for client in (a, b):
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()
    report(f"one-write turn over stdio, {files} files vs 100", statistics.median(times["a"]),
           statistics.median(times["b"]), target="<= 1.3x")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--files", type=int, default=int(os.environ.get("BENCH_FILES",
                                                                        "20000")))
    parser.add_argument("--reuse", type=Path, default=None,
                        help="make the big workspace in this directory once, reuse it after")
    parser.add_argument("--first", type=int, default=0, metavar="N",
                        help="only the first edit of N fresh servers against their second")
    parser.add_argument("--idle", type=float, default=0.0, metavar="S",
                        help="with --first: seconds between the first answer and the chat")
    parser.add_argument("--before", default="", metavar="SRC",
                        help="with --first: also the big workspace with these server sources "
                             "(PYTHONPATH), interleaved")
    args = parser.parse_args()
    if args.first:
        asyncio.run(first_edits(args.first, args.files, args.reuse, args.idle, args.before))
    else:
        asyncio.run(main(args.rounds, args.files, args.reuse))
