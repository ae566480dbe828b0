"""Where a whole offline ``openprogram-lsp chat`` run's CPU goes (no target: the reasons
behind ``bench_start.py``'s CLI figures, docs/decisions/server-weight.md).

Each run is a fresh process (a fresh state root, a small git repository, ``--model offline
"list ."``) that times, in its own CPU seconds: ``import pydantic`` (what ``BaseModel`` needs),
dataclasses made, pydantic model classes made, validators built after their class (on first
use), modules unmarshalled from their ``.pyc``, regexes compiled; and counts the modules it
loaded, ours among them, and ours whose code ran after ``chat``'s imports (a function
called: the rest were loaded and not used by this turn).
Median of ``--runs``, with ``python -c pass`` beside it.

Run: ``.venv/bin/python bench/bench_chat_breakdown.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = r"""
import collections, dataclasses, json, marshal, os, re, sys, threading, time
import importlib._bootstrap_external as external

clock = time.process_time
start = clock()
spent = collections.Counter()
count = collections.Counter()
busy = [0]

def timed(owner, name, key):
    inner = getattr(owner, name)
    def wrapper(*args, **kwargs):
        if busy[0]:  # nested work counts once, in the outermost part
            return inner(*args, **kwargs)
        busy[0] += 1
        t = clock()
        try:
            return inner(*args, **kwargs)
        finally:
            busy[0] -= 1
            spent[key] += clock() - t
            count[key] += 1
    setattr(owner, name, wrapper)

timed(dataclasses, "_process_class", "dataclasses made")
timed(re, "_compile", "regexes compiled")
loads = marshal.loads
def unmarshal(*args):
    t = clock()
    try:
        return loads(*args)
    finally:
        spent["modules unmarshalled"] += clock() - t
        count["modules unmarshalled"] += 1
proxy = type(sys)("marshal")
proxy.__dict__.update({k: v for k, v in vars(marshal).items() if not k.startswith("__")})
proxy.loads = unmarshal
external.marshal = proxy
t = clock()
import pydantic, pydantic.main, pydantic.type_adapter
from pydantic._internal import _model_construction as construction
spent["import pydantic (BaseModel)"] = clock() - t
timed(construction.ModelMetaclass, "__new__", "pydantic model classes made")
timed(construction, "complete_model_class", "model validators built after their class")
timed(pydantic.type_adapter.TypeAdapter, "_init_core_attrs", "type adapters set up")

import openprogram_lsp.cli, openprogram_lsp.app, openprogram_lsp.terminal.chat
import openprogram_lsp.terminal.prompts  # what chat imports before it runs
from openprogram_lsp.cli import main
ran = set()
def profile(frame, event, arg):
    if event == "call" and frame.f_code.co_name != "<module>":
        ran.add(frame.f_globals.get("__name__"))

def report():
    sys.setprofile(None)
    ours = [m for m in sys.modules if m.startswith("openprogram_lsp")]
    out = {"total": clock() - start, "spent": spent, "count": count,
           "modules": len(sys.modules), "ours": len(ours),
           "ours_ran": len([m for m in ours if m in ran])}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)

sys.setprofile(profile)
threading.setprofile(profile)
real_exit = os._exit
def leave(code):
    report()
    real_exit(code)
os._exit = leave
code = main(sys.argv[2:])
leave(code)
"""


def _cpu_of(cmd: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main(runs: int) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ws = tmp / "ws"
        ws.mkdir()
        (ws / "a.txt").write_text("a\n")
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        seen: list[dict] = []
        bare: list[float] = []
        for i in range(max(3, runs) + 1):
            out = tmp / f"run{i}.json"
            subprocess.run([sys.executable, "-c", PROBE, str(out), "chat", "--workspace",
                            str(ws), "--home", str(tmp / f"home{i}"), "--model", "offline",
                            "list ."], env=env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            pass_cpu = _cpu_of([sys.executable, "-c", "pass"], env)
            if i:  # the first round warms the disk cache
                seen.append(json.loads(out.read_text()))
                bare.append(pass_cpu)
    med = statistics.median
    total = med(s["total"] for s in seen)
    print(f"a whole offline chat run, CPU inside the process: {1e3 * total:.0f} ms "
          f"(python -c pass, whole process: {1e3 * med(bare):.0f} ms)")
    parts = sorted({k for s in seen for k in s["spent"]},
                   key=lambda k: -med(s["spent"].get(k, 0.0) for s in seen))
    for key in parts:
        ms = 1e3 * med(s["spent"].get(key, 0.0) for s in seen)
        n = med(s["count"].get(key, 0) for s in seen)
        print(f"  {key:<40} {ms:7.1f} ms  {100 * ms / (1e3 * total):4.0f}%"
              + (f"  ({n:g})" if n else ""))
    rest = total - sum(med(s["spent"].get(k, 0.0) for s in seen) for k in parts)
    print(f"  {'the rest (module bodies, stdlib, the turn)':<40} {1e3 * rest:7.1f} ms  "
          f"{100 * rest / total:4.0f}%")
    print(f"modules loaded {med(s['modules'] for s in seen):g}, ours "
          f"{med(s['ours'] for s in seen):g}, ours whose code ran after chat's imports "
          f"{med(s['ours_ran'] for s in seen):g}")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    main(parser.parse_args().runs)
