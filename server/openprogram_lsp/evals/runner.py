"""Run tasks through the real dispatcher: a fresh workspace and state root each, one user turn,
then the check.

The turn goes through everything a user's turn does (the tool gate, the permission mode and
approvals, the sandbox, checkpoints, the context engine). Permission mode ``bypass`` runs every
call; ``accept-edits`` runs edits and asks for the rest, which the harness approves once each
(counted) as a user watching would. ``--model scripted`` gives each task its scripted solution
through the scripted model.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.config import load_settings
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.core.types import (
    PermissionOutcome,
    PermissionRequest,
    TurnRequest,
    TurnResult,
)
from openprogram_lsp.evals.args import MODES, SCRIPTED
from openprogram_lsp.evals.check import lay_hidden, run_check
from openprogram_lsp.evals.tasks import Task
from openprogram_lsp.events.bus import Event, EventBus

_GIT_ENV = {"GIT_AUTHOR_NAME": "eval", "GIT_AUTHOR_EMAIL": "eval@localhost",
            "GIT_COMMITTER_NAME": "eval", "GIT_COMMITTER_EMAIL": "eval@localhost",
            "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


@dataclass(slots=True)
class RunOptions:
    """How the tasks run."""

    model: str
    permission_mode: str = "bypass"
    solution: str = "solution"  # with --model scripted: which <name>.json
    turn_timeout: float = 600.0
    keep: bool = False  # leave each task's workspace and state root for inspection
    env: Mapping[str, str] | None = None  # settings' environment (default: os.environ)


@dataclass(slots=True)
class TaskResult:
    """What one task's run produced."""

    id: str
    title: str
    kind: str
    solved: bool
    status: str  # the turn's status: done, error, cancelled, ... ("skipped": no solution)
    model_calls: int = 0
    tool_calls: int = 0
    failed_tool_calls: int = 0
    approvals: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    agent_seconds: float = 0.0
    check_seconds: float = 0.0
    seconds: float = 0.0
    error: str | None = None
    reply: str = ""
    check_exit_code: int | None = None
    check_output: str = ""
    sandboxed: bool = False
    workspace: str | None = None
    tools: dict[str, int] = field(default_factory=dict)

    def wire(self) -> dict[str, Any]:
        """As JSON-ready data."""
        return asdict(self)


class CountingApprover:
    """Approves each call once, as a user watching the run would, and counts them."""

    def __init__(self) -> None:
        self.count = 0

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        self.count += 1
        return PermissionOutcome(outcome="selected", option_id="allow_once", kind="allow_once")


def _git_init(workspace: Path) -> None:
    """Make the fixture a git repository with one commit (as a user's project would be)."""
    git = shutil.which("git")
    if git is None:
        return
    env = {**os.environ, **_GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["commit", "-q", "--no-verify", "-m", "fixture"]):
        done = subprocess.run([git, *args], cwd=workspace, env=env, capture_output=True,
                              check=False, timeout=60)
        if done.returncode != 0:
            return


def _model_for(task: Task, opts: RunOptions, tmp: Path) -> str | None:
    if opts.model != SCRIPTED:
        return opts.model
    source = task.solution(opts.solution)
    if source is None:
        return None
    script = tmp / f"{opts.solution}.json"  # its own path: the scripted model starts at 0
    shutil.copyfile(source, script)
    return f"{SCRIPTED}:{script}"


async def _turn(dispatcher: Any, prompt: str, timeout: float) -> TurnResult:
    control = TurnControl()
    run = asyncio.ensure_future(dispatcher.run_turn(TurnRequest(text=prompt, source="cli"),
                                                    control=control))
    done, _ = await asyncio.wait({run}, timeout=timeout)
    if not done:
        control.request_cancel()
    result: TurnResult = await run
    return result


async def run_task(task: Task, opts: RunOptions) -> TaskResult:
    """Run one task in a fresh temporary workspace and state root; then check it."""
    tmp = Path(tempfile.mkdtemp(prefix=f"openprogram-eval-{task.id}-"))
    start = time.monotonic()
    out = TaskResult(id=task.id, title=task.title, kind=task.kind, solved=False,
                     status="skipped")
    try:
        spec = _model_for(task, opts, tmp)
        if spec is None:
            out.error = f"no {opts.solution}.json for this task"
            return out
        ws, home = tmp / "workspace", tmp / "home"
        shutil.copytree(task.repo, ws, symlinks=True)
        _git_init(ws)
        env = dict(os.environ if opts.env is None else opts.env)
        env["OPENPROGRAM_HOME"] = str(home)
        settings = load_settings(env=env)
        approver = CountingApprover() if opts.permission_mode == "accept-edits" else None
        bus = EventBus()
        calls: list[Event] = []
        bus.subscribe(calls.append, types=["model.response_completed"])
        dispatcher = build_dispatcher(
            AppConfig(workspace=ws, home=home, model=spec,
                      permission_mode=opts.permission_mode,  # type: ignore[arg-type]
                      settings=settings, approval_timeout=None), approver=approver, bus=bus)
        t0 = time.monotonic()
        result = await _turn(dispatcher, task.prompt, opts.turn_timeout)
        out.agent_seconds = time.monotonic() - t0
        _fill(out, result, dispatcher, calls)
        if approver is not None:
            out.approvals = approver.count
        lay_hidden(task.hidden, ws)
        check = await run_check(task.check, ws, settings, task.check_timeout)
        out.solved = check.passed
        out.check_exit_code, out.check_output = check.exit_code, check.output
        out.check_seconds, out.sandboxed = check.seconds, check.sandboxed
        return out
    finally:
        out.seconds = time.monotonic() - start
        if opts.keep:
            out.workspace = str(tmp)
        else:
            with contextlib.suppress(OSError):
                shutil.rmtree(tmp)


def _fill(out: TaskResult, result: TurnResult, dispatcher: Any, calls: list[Event]) -> None:
    out.status = result.status
    out.reply = result.text[-2000:]
    if result.error is not None:
        out.error = result.error.message
    usage = result.usage
    out.input_tokens, out.output_tokens = usage.input_tokens, usage.output_tokens
    out.cache_read_tokens = usage.cache_read_tokens or 0
    out.cache_write_tokens = usage.cache_write_tokens or 0
    out.model_calls = sum(1 for e in calls if e.session_id == result.session_id)
    node = dispatcher.services.store.get_node(result.session_id, result.assistant_node_id)
    records = node.tool_calls or []
    out.tool_calls = len(records)
    out.failed_tool_calls = sum(1 for r in records if r.status == "failed")
    for r in records:
        out.tools[r.name] = out.tools.get(r.name, 0) + 1


async def run_tasks(tasks: list[Task], opts: RunOptions,
                    on_result: Callable[[TaskResult], None] | None = None,
                    jobs: int = 1) -> list[TaskResult]:
    """Run the tasks, ``jobs`` at a time (each in its own workspace, state root and
    dispatcher); ``on_result`` hears each as it finishes; the results come in task order."""
    if opts.permission_mode not in MODES:
        raise ConfigError(f"eval runs in permission mode {' or '.join(MODES)}, not "
                          f"{opts.permission_mode!r}")
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(task: Task) -> TaskResult:
        async with gate:
            r = await run_task(task, opts)
        if on_result is not None:
            on_result(r)
        return r

    return list(await asyncio.gather(*(one(t) for t in tasks)))
