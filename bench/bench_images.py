"""An image in a 50-turn session: stored once, and the prompt-cache prefix kept whole.

One session of real dispatcher turns (each: the model reads a workspace file, then answers)
against a loopback OpenAI-compatible server (``tests/context/agent_server``), with the model
``openai:gpt-4o`` (it takes images) and a window large enough that nothing compacts. Side A
attaches the same PNG at turn 0, re-sends it at turns 10, 20, 30 and 40 and, after the last
turn, forks from turn 0's reply with it once more; side B (the baseline, same run) is the same
session without images. Printed per side: the bytes of the image store and of the session store
(``sessions/``), the image files stored, the prompt-cache prefix figure (the share of
consecutive requests of the main line whose prefix is the whole previous request), the largest
request, and the session's wall time (median of ``BENCH_ROUNDS`` >= 7 interleaved A B runs,
each side in its own process).

    .venv/bin/python bench/bench_images.py [--turns 50]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = max(7, int(os.environ.get("BENCH_ROUNDS", "7")))
RESENDS = (10, 20, 30, 40)


def extends(prev: dict[str, Any], cur: dict[str, Any]) -> bool:
    """Whether ``cur`` starts with the whole of ``prev`` (what a prompt cache can reuse)."""
    a, b = prev["messages"], cur["messages"]
    return prev.get("tools") == cur.get("tools") and b[:len(a)] == a


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.exists() else 0


async def session(turns: int, images: bool) -> dict[str, Any]:
    """One session in this process; with ``images`` the picture goes with turns 0, 10, ... ."""
    from tests.context.agent_server import SessionModel, user_text, write_workspace
    from tests.imagefiles import png
    from tests.providers.loopback import LoopbackServer

    from openprogram_lsp.app import AppConfig, build_dispatcher
    from openprogram_lsp.config import load_settings
    from openprogram_lsp.core.types import TurnRequest
    from openprogram_lsp.events.bus import EventBus
    from openprogram_lsp.terminal.chat import attach_images

    srv = LoopbackServer().start()
    model = SessionModel(srv).install()
    tmp = Path(tempfile.mkdtemp(prefix="bench-images-"))
    ws, home = tmp / "ws", tmp / "home"
    write_workspace(ws)
    picture = ws / "mock.png"
    picture.write_bytes(png(800, 600, seed=7, noise=True))
    env = {"OPENAI_BASE_URL": f"{srv.url}/v1", "OPENAI_API_KEY": "sk-bench",
           "OPENPROGRAM_CONTEXT_WINDOW": "1000000", "OPENPROGRAM_HOME": str(home)}
    os.environ.update(env)
    d = build_dispatcher(AppConfig(workspace=ws, home=home, model="openai:gpt-4o",
                                   permission_mode="bypass",
                                   settings=load_settings(env=env, user_file=False)),
                         bus=EventBus())
    sid: str | None = None
    first_reply = ""
    t0 = time.perf_counter()
    for t in range(turns):
        req = TurnRequest(text=user_text(t), session_id=sid)
        if images and (t == 0 or t in RESENDS):
            attach_images(d, req, [picture], ws)
        r = await d.run_turn(req)
        if r.status != "done":
            raise SystemExit(f"turn {t} ended {r.status}: {r.error}")
        sid = r.session_id
        first_reply = first_reply or r.assistant_node_id
    main_line = len(model.requests)
    fork = TurnRequest(text=user_text(turns), session_id=sid, branch_from=first_reply)
    if images:
        attach_images(d, fork, [picture], ws)
    r = await d.run_turn(fork)
    if r.status != "done":
        raise SystemExit(f"the fork ended {r.status}: {r.error}")
    wall = time.perf_counter() - t0
    srv.stop()
    reqs = model.requests[:main_line]
    pairs = len(reqs) - 1
    kept = sum(extends(a, b) for a, b in itertools.pairwise(reqs))
    carried = sum(1 for b in model.requests if "data:image/png;base64," in json.dumps(b))
    return {"image_store": tree_bytes(home / "images"),
            "image_files": len(list((home / "images").glob("??/*"))),
            "image_bytes": picture.stat().st_size, "session_store": tree_bytes(home / "sessions"),
            "prefix": kept / max(1, pairs), "requests": len(model.requests),
            "with_image": carried,
            "max_request": max(len(json.dumps(b)) for b in model.requests), "wall": wall}


def run_side(turns: int, images: bool) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT)])}
    cmd = [sys.executable, __file__, "--session", "--turns", str(turns)]
    if images:
        cmd.append("--images")
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"session failed:\n{out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--images", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--session", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.session:
        print(json.dumps(asyncio.run(session(args.turns, args.images))))
        return
    print(f"load average {os.getloadavg()[0]:.2f}; {ROUNDS} interleaved rounds of the "
          f"{args.turns}-turn session (+ a fork), A: an image at turns 0, "
          f"{', '.join(map(str, RESENDS))} and the fork; B (baseline): none")
    walls: dict[bool, list[float]] = {True: [], False: []}
    results: dict[bool, dict[str, Any]] = {}
    for _ in range(ROUNDS):
        for images in (True, False):
            r = run_side(args.turns, images)
            walls[images].append(r["wall"])
            results[images] = r
    a, b = results[True], results[False]
    rows = (("image_bytes", "the image file (bytes)"),
            ("image_files", "image files in the store"),
            ("image_store", "image store (bytes)"),
            ("session_store", "session store, sessions/ (bytes)"),
            ("with_image", "requests carrying the image"),
            ("requests", "model requests (main line + fork)"),
            ("prefix", "main-line requests extending the previous one"),
            ("max_request", "largest request (JSON bytes)"))
    for key, name in rows:
        x, y = a[key], b[key]
        if isinstance(x, float):
            x, y = f"{100 * x:.1f}%", f"{100 * y:.1f}%"
        print(f"  {name:<48} {x!s:<14} baseline {y!s}")
    print(f"  {'session wall time, median (s)':<48} "
          f"{statistics.median(walls[True]):<14.2f} baseline {statistics.median(walls[False]):.2f}")
    grew = a["session_store"] - b["session_store"]
    print(f"  the image store holds the image {a['image_store'] / a['image_bytes']:.2f} times; "
          f"the session store grew {grew:,} bytes with 6 attachments (records, never bytes)")


if __name__ == "__main__":
    main()
