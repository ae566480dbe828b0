"""How often a long session compacts, today's tree beside the tree before compaction headroom.

One session of real dispatcher turns (each: the model reads a workspace file, then answers)
against a loopback OpenAI-compatible server that reports honest usage (request bytes / 4); the
context window is set with ``OPENPROGRAM_CONTEXT_WINDOW``. Each side runs in its own process
with ``openprogram_lsp`` imported from its tree (the baseline is ``git archive`` of
``--baseline``, by default the last commit before the headroom change), the same test helpers
and the same server. Printed per side: the turns that compacted (a ``context.compacted``
event), the fewest turns between two, summariser calls, the largest request (input as request
bytes / 4, plus the output tokens asked for), and the prompt-cache prefix figure: the share of
consecutive model requests whose prefix is the whole previous request, over all of them and
over those with no compaction between. Then a 6,000-token window, the same with a server
that reports ``prompt_tokens: 100`` on every call (calibration), and the first session against
a loopback Anthropic server whose replies open with signed thinking blocks (the prefix figure
for the other API: its thinking blocks go back byte for byte, ``cache_control`` marks aside).
Counts are deterministic; session wall time is the median of ``BENCH_ROUNDS`` (>= 7)
interleaved A B runs.

    .venv/bin/python bench/bench_compaction.py [--baseline REV] [--turns 60] [--window 16000]
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
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "f7feca2"  # main just before compaction headroom (target 60%, no cooldown, 0.25 floor)
ROUNDS = max(7, int(os.environ.get("BENCH_ROUNDS", "7")))


def unmarked(value: Any) -> Any:
    """A request part without Anthropic's ``cache_control`` breakpoints (they move forward with
    each request; the cache matches the bytes before them)."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def extends(prev: dict[str, Any], cur: dict[str, Any]) -> bool:
    """Whether ``cur`` starts with the whole of ``prev`` (what a prompt cache can reuse):
    the same tools and system prompt, and the previous messages unchanged at its head."""
    a, b = unmarked(prev["messages"]), unmarked(cur["messages"])
    return (unmarked(prev.get("tools")) == unmarked(cur.get("tools"))
            and unmarked(prev.get("system")) == unmarked(cur.get("system"))
            and b[:len(a)] == a)


async def session(window: int, turns: int, reported: int | None,
                  api: str = "openai") -> dict[str, Any]:
    """One session in this process (``openprogram_lsp`` from whichever tree is on the path)."""
    from tests.context.agent_server import (
        AnthropicSessionModel,
        SessionModel,
        request_estimate,
        request_tokens,
        user_text,
        write_workspace,
    )
    from tests.providers.loopback import LoopbackServer

    from openprogram_lsp.app import AppConfig, build_dispatcher
    from openprogram_lsp.config import load_settings
    from openprogram_lsp.core.types import TurnRequest
    from openprogram_lsp.events.bus import Event, EventBus

    srv = LoopbackServer().start()
    kind = AnthropicSessionModel if api == "anthropic" else SessionModel
    model = kind(srv, reported_prompt_tokens=reported).install()
    tmp = Path(tempfile.mkdtemp(prefix="bench-compaction-"))
    ws, home = tmp / "ws", tmp / "home"
    write_workspace(ws)
    env = {"OPENAI_BASE_URL": f"{srv.url}/v1", "OPENAI_API_KEY": "sk-bench",
           "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "sk-bench",
           "OPENPROGRAM_CONTEXT_WINDOW": str(window), "OPENPROGRAM_HOME": str(home)}
    os.environ.update(env)
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append, types=["context.compacted"])
    spec = "anthropic:claude-sonnet-4-5" if api == "anthropic" else "openai:gpt-test"
    d = build_dispatcher(AppConfig(workspace=ws, home=home, model=spec,
                                   permission_mode="bypass",
                                   settings=load_settings(env=env, user_file=False)), bus=bus)
    at: list[int] = []
    first_request: list[int] = []
    sid: str | None = None
    t0 = time.perf_counter()
    for t in range(turns):
        n = len(seen)
        first_request.append(len(model.requests))
        r = await d.run_turn(TurnRequest(text=user_text(t), session_id=sid))
        if r.status != "done":
            raise SystemExit(f"turn {t} ended {r.status}: {r.error}")
        sid = r.session_id
        if len(seen) > n:
            at.append(t)
    wall = time.perf_counter() - t0
    srv.stop()
    main = [b for b in model.requests if b.get("tools")]
    compacting = {first_request[t] for t in at}  # index in model.requests of such a turn
    pairs = kept = calm_pairs = calm_kept = 0
    prev: dict[str, Any] | None = None
    since_compaction = False
    for i, body in enumerate(model.requests):
        if i in compacting:
            since_compaction = True
        if not body.get("tools"):
            continue  # a summariser call
        if prev is not None:
            ok = extends(prev, body)
            pairs += 1
            kept += ok
            if not since_compaction:
                calm_pairs += 1
                calm_kept += ok
        prev, since_compaction = body, False
    gaps = [b - a for a, b in itertools.pairwise(at)]
    return {"compacted_at": at, "min_gap": min(gaps) if gaps else None,
            "summaries": model.summaries, "requests": len(main),
            "max_request": max(request_tokens(b) for b in model.requests),
            "max_estimate": max(request_estimate(b) for b in model.requests),
            "prefix_all": kept / max(1, pairs), "prefix_calm": calm_kept / max(1, calm_pairs),
            "wall": wall}


def export(rev: str, into: Path) -> Path:
    """The ``server`` tree of ``rev``, unpacked under ``into``."""
    archive = into / "tree.tar"
    with open(archive, "wb") as fh:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev, "server"], stdout=fh,
                       check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "server"


def run_side(server_dir: Path, window: int, turns: int, reported: int | None,
             api: str = "openai") -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(server_dir), str(ROOT)])}
    cmd = [sys.executable, __file__, "--session", "--window", str(window), "--turns",
           str(turns), "--api", api]
    if reported is not None:
        cmd += ["--reported", str(reported)]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"session failed ({server_dir}):\n{out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return result


def show(label: str, now: dict[str, Any], before: dict[str, Any], turns: int) -> None:
    print(f"\n{label}")
    for key, name in (("compacted_at", "turns that compacted"),
                      ("min_gap", "fewest turns between two compactions"),
                      ("summaries", "summariser calls"),
                      ("max_request", "largest request, JSON bytes / 4 + asked output"),
                      ("max_estimate", "largest request, estimator + asked output"),
                      ("prefix_all", "requests extending the previous one (all)"),
                      ("prefix_calm", "requests extending the previous one (no compaction)")):
        a, b = now[key], before[key]
        if isinstance(a, float):
            a, b = f"{100 * a:.1f}%", f"{100 * b:.1f}%"
        print(f"  {name:<52} {a!s:<28} baseline {b!s}")
    n, m = len(now["compacted_at"]), len(before["compacted_at"])
    print(f"  {'compactions per ' + str(turns) + ' turns':<52} {n:<28} baseline {m}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--window", type=int, default=16_000)
    ap.add_argument("--turns", type=int, default=60)
    ap.add_argument("--reported", type=int, default=None)
    ap.add_argument("--api", default="openai", help=argparse.SUPPRESS)
    ap.add_argument("--session", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.session:
        print(json.dumps(asyncio.run(session(args.window, args.turns, args.reported,
                                             args.api))))
        return
    with tempfile.TemporaryDirectory(prefix="bench-compaction-base-") as tmp:
        base = export(args.baseline, Path(tmp))
        here = ROOT / "server"
        print(f"baseline {args.baseline}; load average {os.getloadavg()[0]:.2f}; "
              f"{ROUNDS} interleaved rounds of the {args.turns}-turn session")
        walls: dict[str, list[float]] = {"now": [], "base": []}
        results: dict[str, dict[str, Any]] = {}
        for _ in range(ROUNDS):
            for key, tree in (("now", here), ("base", base)):
                r = run_side(tree, args.window, args.turns, None)
                if key in results and r["compacted_at"] != results[key]["compacted_at"]:
                    raise SystemExit("compaction turns differ between rounds")
                results[key] = r
                walls[key].append(r["wall"])
        show(f"{args.window}-token window, {args.turns} turns", results["now"],
             results["base"], args.turns)
        print(f"  {'session wall time, median s':<52} "
              f"{statistics.median(walls['now']):<28.2f} "
              f"baseline {statistics.median(walls['base']):.2f}")
        small = {k: run_side(t, 6000, 30, None) for k, t in (("now", here), ("base", base))}
        show("6000-token window, 30 turns", small["now"], small["base"], 30)
        tiny = {k: run_side(t, 6000, 30, 100) for k, t in (("now", here), ("base", base))}
        show("6000-token window, 30 turns, server reporting prompt_tokens: 100", tiny["now"],
             tiny["base"], 30)
        claude = {k: run_side(t, args.window, args.turns, None, "anthropic")
                  for k, t in (("now", here), ("base", base))}
        show(f"Anthropic (claude-sonnet-4-5, every reply opening with a signed thinking block; "
             f"cache_control marks aside), {args.window}-token window, {args.turns} turns",
             claude["now"], claude["base"], args.turns)


if __name__ == "__main__":
    main()
