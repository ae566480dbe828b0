"""Printing results: one line a task as it finishes, a summary, and the JSON report."""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openprogram_lsp import __version__
from openprogram_lsp.evals.runner import RunOptions, TaskResult

HEADER = (f"{'task':<22} {'result':<8} {'turns':>5} {'tools':>5} {'tok in':>8} {'tok out':>8} "
          f"{'cache rd':>8} {'time s':>7}")


def line(r: TaskResult) -> str:
    """One task's line of the table."""
    result = "solved" if r.solved else ("skipped" if r.status == "skipped" else "FAILED")
    text = (f"{r.id:<22} {result:<8} {r.model_calls:>5} {r.tool_calls:>5} {r.input_tokens:>8} "
            f"{r.output_tokens:>8} {r.cache_read_tokens:>8} {r.seconds:>7.1f}")
    if r.status not in ("done", "skipped"):
        text += f"  (turn {r.status}{': ' + r.error.splitlines()[0][:80] if r.error else ''})"
    elif r.status == "skipped" and r.error:
        text += f"  ({r.error})"
    return text


def summary(results: list[TaskResult]) -> dict[str, Any]:
    """Totals over the tasks that ran (skipped ones are counted apart)."""
    ran = [r for r in results if r.status != "skipped"]
    solved = sum(r.solved for r in ran)
    return {
        "tasks": len(ran), "solved": solved, "skipped": len(results) - len(ran),
        "solve_rate": round(solved / len(ran), 4) if ran else 0.0,
        "model_calls": sum(r.model_calls for r in ran),
        "tool_calls": sum(r.tool_calls for r in ran),
        "failed_tool_calls": sum(r.failed_tool_calls for r in ran),
        "approvals": sum(r.approvals for r in ran),
        "input_tokens": sum(r.input_tokens for r in ran),
        "output_tokens": sum(r.output_tokens for r in ran),
        "cache_read_tokens": sum(r.cache_read_tokens for r in ran),
        "cache_write_tokens": sum(r.cache_write_tokens for r in ran),
        "seconds": round(sum(r.seconds for r in ran), 3),
        "turn_errors": sum(1 for r in ran if r.status != "done"),
    }


def summary_line(s: dict[str, Any]) -> str:
    """The summary as one line."""
    text = (f"solved {s['solved']}/{s['tasks']} ({100 * s['solve_rate']:.0f}%), "
            f"{s['model_calls']} model calls, {s['tool_calls']} tool calls "
            f"({s['failed_tool_calls']} failed), tokens in {s['input_tokens']:,} out "
            f"{s['output_tokens']:,} cache-read {s['cache_read_tokens']:,}, "
            f"{s['seconds']:.1f} s")
    if s["approvals"]:
        text += f", {s['approvals']} approvals"
    if s["skipped"]:
        text += f"; {s['skipped']} skipped"
    return text


def _commit() -> str | None:
    """The source tree's git commit (``+dirty`` when changed), when it is a checkout."""
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True).stdout
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "server"],
                               capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return head.strip() + ("+dirty" if dirty.strip() else "")


def document(results: list[TaskResult], opts: RunOptions) -> dict[str, Any]:
    """The JSON report: the run's settings, each task, the summary."""
    return {
        "model": opts.model, "solution": opts.solution if opts.model == "scripted" else None,
        "permission_mode": opts.permission_mode, "version": __version__,
        "commit": _commit(), "python": platform.python_version(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "tasks": [r.wire() for r in results], "summary": summary(results),
    }
