"""Diagnostics after edits: what asking the editor's language servers adds to an edit turn.

One headless Neovim runs pylsp (as a user's config would) and two plain clients, each with its
own server and both answering ``openprogram/diagnostics`` with the plugin's handler: server A
with ``[diagnostics] after_edits = "errors"``, server B with ``"off"``. Each turn is one
``edit_file`` of a Python file (alternately breaking and fixing it) and a reply; the turns
alternate A B A B. Figures: the median turn of A beside B's (target: A - B <= 1.5 s), also
apart for the edits that break the file and those that fix it (a reload makes pylsp publish an
empty set first: it must not pass for the answer); the off path sends no request, so A/B's
difference is the whole cost. Each edit's result is checked: what is timed must be right.

Run: ``.venv/bin/python bench/bench_edit_diagnostics.py [turns]`` (default 9).
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.* for the runner
from _util import report

RUNNER = Path(__file__).resolve().parents[1] / "tests" / "editors" / "nvim" / "runner.py"


def _script(path: Path, name: str, turns: int) -> str:
    steps = []
    for i in range(turns):
        old, new = ("return 0", "return missing") if i % 2 == 0 else ("return missing",
                                                                       "return 0")
        steps += [{"tool_calls": [{"name": "edit_file", "arguments": {
            "path": name, "old_text": old, "new_text": new}}]}, {"text": "Edited."}]
    path.write_text(json.dumps(steps), "utf-8")
    return f"scripted:{path}"


def _told(log: Path) -> list[str]:
    """What each edit of a.py's result told the model, in turn order: ``broke`` (its new
    undefined name), ``fixed`` or ``nothing``."""
    out = []
    for line in log.read_text("utf-8").splitlines():
        messages = json.loads(line)["messages"]
        if not messages or messages[-1].get("role") != "tool":
            continue
        result = str(messages[-1].get("content"))
        if "a.py" not in result.split("\n", 1)[0]:
            continue  # b.py: the turns with diagnostics off
        out.append("broke" if "undefined name 'missing'" in result
                   else "fixed" if "It fixed 1 problem" in result else "nothing")
    return out


def main(turns: int = 9) -> None:
    """Run the scenario and print the medians."""
    spec = importlib.util.spec_from_file_location("openprogram_nvim_runner", RUNNER)
    assert spec and spec.loader
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    with tempfile.TemporaryDirectory() as tmp:
        ws, home = Path(tmp) / "ws", Path(tmp) / "home"
        ws.mkdir()
        home.mkdir()
        for name in ("a.py", "b.py"):
            (ws / name).write_text("def f():\n    return 0\n", "utf-8")
        (ws / "notes.py").write_text("x = 1\n", "utf-8")
        os.environ["OP_BENCH_TURNS"] = str(turns)
        log = Path(tmp) / "calls.jsonl"
        models = {"OP_MODEL_ON": _script(Path(tmp) / "on.json", "a.py", turns),
                  "OP_MODEL_OFF": _script(Path(tmp) / "off.json", "b.py", turns),
                  "OPENPROGRAM_SCRIPTED_LOG": str(log)}
        out = runner.run_scenario("bench_diagnostics", ws, model="offline", home=home,
                                  timeout=900, exec_server=True, extra_env=models)
        told = _told(log)
    # what is timed must be right: each edit of a.py told what it broke or fixed
    want = ["broke" if i % 2 == 0 else "fixed" for i in range(turns)]
    print(f"what the model was told of a.py's edits: {told}")
    assert told == want, f"the diagnostics were wrong: {told} (want {want})"
    on = statistics.median(out["on_ms"][1:]) / 1e3
    off = statistics.median(out["off_ms"][1:]) / 1e3
    print(f"on turns (ms):  {[round(x) for x in out['on_ms']]}")
    print(f"off turns (ms): {[round(x) for x in out['off_ms']]}")
    report(f"edit turn, diagnostics on (median of {turns - 1})", on, off,
           target="on - off <= 1500 ms")
    # the first turn (the file loaded) left out: then edits that break it, and that fix it
    for name, picked in (("breaks", slice(2, None, 2)), ("fixes", slice(1, None, 2))):
        part, base = out["on_ms"][picked], out["off_ms"][picked]
        if part:
            report(f"  an edit that {name} the file (median of {len(part)})",
                   statistics.median(part) / 1e3, statistics.median(base) / 1e3,
                   target="on - off <= 1500 ms")
    print(f"added by the diagnostics wait: {(on - off) * 1e3:.0f} ms", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
