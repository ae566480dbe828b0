"""``openprogram-lsp eval``: what it does with its arguments (``evals/args.py``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from openprogram_lsp.config import load_settings
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.evals import report
from openprogram_lsp.evals.args import SCRIPTED
from openprogram_lsp.evals.runner import RunOptions, TaskResult, run_tasks
from openprogram_lsp.evals.tasks import TASKS_DIR, load_tasks
from openprogram_lsp.providers.factory import make_provider


def _model(spec: str | None) -> str:
    if spec == SCRIPTED:
        return spec
    settings = load_settings()
    chosen = spec or settings.get(CoreSettings).model or "offline"
    make_provider(chosen, settings=settings)  # a missing key or bad spec: one error now
    return chosen


def run(args: argparse.Namespace) -> int:
    """Run the tasks; exit 0 when the run finished (whatever was solved)."""
    tasks = load_tasks(args.tasks_dir or TASKS_DIR, args.task)
    if args.list:
        for t in tasks:
            print(f"{t.id:<22} {t.kind:<26} {t.title}")
        return 0
    if args.timeout <= 0:
        raise ConfigError("--timeout must be more than 0 seconds")
    if not 1 <= args.jobs <= 64:
        raise ConfigError("--jobs must be between 1 and 64")
    opts = RunOptions(model=_model(args.model), permission_mode=args.permission_mode,
                      solution=args.solution, turn_timeout=args.timeout, keep=args.keep)
    table = args.json != "-"
    if table:
        print(f"model {opts.model}, permission mode {opts.permission_mode}, "
              f"{len(tasks)} task(s)")
        print(report.HEADER)

    def show(r: TaskResult) -> None:
        if table:
            print(report.line(r), flush=True)

    results = asyncio.run(run_tasks(tasks, opts, on_result=show, jobs=args.jobs))
    doc = report.document(results, opts)
    if table:
        print(report.summary_line(doc["summary"]))
    if args.json == "-":
        json.dump(doc, sys.stdout, indent=1)
        print()
    elif args.json:
        try:
            Path(args.json).write_text(json.dumps(doc, indent=1) + "\n", "utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write the report to {args.json}: {exc.strerror}") \
                from None
    return 0
