"""The ``eval`` subcommand's arguments (light: the CLI's parser imports it on every run)."""

from __future__ import annotations

import argparse
from pathlib import Path

SCRIPTED = "scripted"  # --model scripted: each task's own scripted solution
MODES = ("bypass", "accept-edits")

DESCRIPTION = (
    "Run the evaluation tasks (small coding tasks: a fixture repository, a prompt and a check) "
    "through the real dispatcher, sandbox and approvals, each in a fresh temporary workspace "
    "and state root, and print per task whether it was solved, model calls, tool calls, "
    "tokens and time. --model scripted replays each task's scripted solution (no network).")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``eval`` subcommand's arguments."""
    p.add_argument("--model", default=None, metavar="SPEC",
                   help="openai:MODEL, anthropic:MODEL, offline, or 'scripted' (each task's "
                        "scripted solution); default: the configured model")
    p.add_argument("--task", action="append", default=None, metavar="ID",
                   help="run only this task (repeatable)")
    p.add_argument("--tasks-dir", type=Path, default=None, metavar="DIR",
                   help="where the task folders are (default: the built-in tasks)")
    p.add_argument("--solution", default="solution", metavar="NAME",
                   help="with --model scripted: replay NAME.json (tasks without it are "
                        "skipped)")
    p.add_argument("--permission-mode", default="bypass", choices=MODES,
                   help="bypass (default) or accept-edits (commands are approved once each "
                        "by the harness, and counted)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="run N tasks at a time (default 1; each has its own workspace, state "
                        "root and dispatcher)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                   help="cancel a task's turn after this long (default 600)")
    p.add_argument("--json", default=None, metavar="FILE",
                   help="also write the report as JSON to FILE ('-': print it instead of "
                        "the table)")
    p.add_argument("--keep", action="store_true",
                   help="keep each task's workspace and state root (their path is in the "
                        "JSON report)")
    p.add_argument("--list", action="store_true", help="list the tasks and exit")


