"""A turn with one no-op PreToolUse hook vs the same turn without hooks, interleaved A B A B.

Each turn is one offline model call making one tool call (``list .``) and a second call ending
the turn, in ``bypass`` mode, so nothing waits for an approval. The hook is the no-op command
``true`` (a real process per call); a hook whose matcher does not select the tool is measured
too (the cost of consulting hooks that do not run). Medians of 15 interleaved rounds each.
The hook runner alone is set beside a bare ``subprocess.run`` of the same command (31
rounds).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.hooks.config import HookSpec
from openprogram_lsp.hooks.engine import HookEngine
from openprogram_lsp.hooks.runner import run_hook

ROUNDS = 15


def _dispatcher(root: Path, name: str, hooks: dict[str, object] | None) -> Dispatcher:
    ws, home = root / name / "ws", root / name / "home"
    ws.mkdir(parents=True)
    (ws / "a.txt").write_text("a\n")
    settings = root / name / "settings.json"
    settings.write_text(json.dumps({"hooks": hooks or {}}))
    d = build_dispatcher(AppConfig(workspace=ws, home=home, model="offline",
                                   permission_mode="bypass"))
    d.services.hooks = HookEngine(home, user_files=[settings])
    return d


def _turn(d: Dispatcher) -> Callable[[], None]:
    sid = d.process_user_turn(TurnRequest(text="list .")).session_id

    def run() -> None:
        r = d.process_user_turn(TurnRequest(text="list .", session_id=sid))
        assert r.status == "done", r.error
    return run


def main() -> None:
    noop = {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}]}
    elsewhere = {"PreToolUse": [{"matcher": "Write",
                                 "hooks": [{"type": "command", "command": "true"}]}]}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs = {"none": _turn(_dispatcher(root, "none", None)),
                "noop": _turn(_dispatcher(root, "noop", noop)),
                "unmatched": _turn(_dispatcher(root, "unmatched", elsewhere))}
        times: dict[str, list[float]] = {k: [] for k in runs}
        order = list(runs)
        for i in range(ROUNDS + 2):  # two warm-up rounds, then interleaved, order rotating
            for key in order[i % 3:] + order[:i % 3]:
                fn = runs[key]
                t0 = time.perf_counter()
                fn()
                if i >= 2:
                    times[key].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        report("turn + one no-op PreToolUse hook (`true`)", med["noop"], med["none"],
               target="baseline = the same turn without hooks; a process per tool call")
        report("turn + a PreToolUse hook that does not match", med["unmatched"], med["none"],
               target="ratio ~1: hooks that do not select the tool cost nothing")
        spec = HookSpec("PreToolUse", "true")
        payload = {"tool_name": "list_dir", "tool_input": {"path": "."}}
        pair = {"ours": lambda: run_hook(spec, payload, root),
                "bare": lambda: subprocess.run(["/bin/sh", "-c", "true"], cwd=root,
                                               input=json.dumps(payload).encode(),
                                               capture_output=True, check=True)}
        micro: dict[str, list[float]] = {"ours": [], "bare": []}
        for i in range(33):  # interleaved, two warm-up rounds
            for key, fn in pair.items():
                t0 = time.perf_counter()
                fn()
                if i >= 2:
                    micro[key].append(time.perf_counter() - t0)
        ours, bare = (statistics.median(micro[k]) for k in ("ours", "bare"))
        report("run_hook(`true`) with the event on stdin", ours, bare,
               target="baseline = bare subprocess.run of the same command")


if __name__ == "__main__":
    main()
