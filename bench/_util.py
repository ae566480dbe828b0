"""Shared helpers for benchmarks: timing and printing a figure beside its baseline."""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def report(name: str, figure: float, baseline: float | None = None, *, unit: str = "ms",
           target: str = "") -> None:
    """Print one line: figure, baseline and their ratio."""
    scale = {"ms": 1e3, "us": 1e6, "s": 1.0, "MB": 1e-6, "B": 1.0}[unit]  # MB, B: in bytes
    line = f"{name:<48} {figure * scale:10.3f} {unit}"
    if baseline is not None:
        line += f"   baseline {baseline * scale:10.3f} {unit}   ratio {figure / baseline:6.2f}"
    if target:
        line += f"   (target {target})"
    print(line, flush=True)


def interleaved(figure: Callable[[], object], baseline: Callable[[], object], *,
                pairs: int = 9, number: int = 1) -> tuple[float, float]:
    """Median seconds per call of ``figure`` and ``baseline``, timed A B A B ... in pairs
    (one warm-up call of each first), so load on the machine hits both alike."""
    figure()
    baseline()
    a: list[float] = []
    b: list[float] = []
    for _ in range(max(7, pairs)):
        for fn, out in ((figure, a), (baseline, b)):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - t0) / number)
    return statistics.median(a), statistics.median(b)


def disk_size(path: Path, *, skip_git: bool = False) -> int:
    """Bytes the files under ``path`` take on disk (blocks; ``skip_git``: not its ``.git``)."""
    total = 0
    for dirpath, dirs, files in os.walk(path):
        if skip_git and dirpath == str(path):
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def context_bytes(root: Path) -> int:
    """Bytes of a session's ContextCommit files."""
    return sum(p.stat().st_size for p in root.rglob("*.context.json"))


def context_record_bytes(store: Any, sid: str, turn: str) -> tuple[int, int]:
    """Bytes of one turn's ContextCommit file as stored (``SessionStore``), and as it would
    be stored with its ``replaced``/``protected`` lists in full (version 2)."""
    path = store.session_dir(sid) / "nodes" / store.index(sid).files[turn]
    raw = path.with_name(path.name[:-len(".json")] + ".context.json").read_bytes()
    full = json.loads(raw)
    read = store.read_context_commit(sid, turn)
    for key in [k for k in full if k.startswith("lists") or k.endswith(("Drop", "Add"))]:
        del full[key]
    full.update(replaced=read["replaced"], protected=read["protected"])
    return len(raw), len(json.dumps(full, separators=(",", ":")))


def offline_dispatcher(root: Path, **config: Any) -> tuple[Any, Path]:
    """A dispatcher on the offline model with its home in ``root/home`` and its workspace
    ``root/ws`` (made here); ``config``: more ``AppConfig`` fields."""
    from openprogram_lsp.app import AppConfig, build_dispatcher

    ws = root / "ws"
    ws.mkdir()
    return build_dispatcher(AppConfig(workspace=ws, home=root / "home", model="offline",
                                      **config)), ws
