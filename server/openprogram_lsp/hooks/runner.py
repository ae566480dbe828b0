"""Running one hook command: the event as JSON on stdin, a timeout, a result to interpret.

A hook is started and ended as a tool's command is (``tools.procs``): in a session of its own,
dying with the server however it dies, killed only through what is proven ours, and when its
shell exits whatever it left running (``sleep 600 &``, a daemon) is killed with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openprogram_lsp.hooks.config import HookSpec
from openprogram_lsp.hooks.listing import HookRunSummary
from openprogram_lsp.tools import procs

MAX_CAPTURE = 64_000  # characters of stdout / stderr kept
POLL = 0.05  # seconds between checks of the turn's cancel flag

# Model-provider credentials stay with the server, as for run_command.
_WITHHELD = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


@dataclass(frozen=True, slots=True)
class HookRun:
    """What one hook run produced."""

    hook: HookSpec
    exit_code: int | None  # None: timed out, cancelled or could not start
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False
    cancelled: bool = False
    error: str | None = None  # could not start

    @property
    def failed(self) -> bool:
        """Timed out, crashed or exited with a code other than 0 and 2 (2 is a decision)."""
        return self.exit_code not in (0, 2)

    def json_output(self) -> dict[str, Any] | None:
        """Stdout as a JSON object, when the hook exited 0 and printed one."""
        if self.exit_code != 0:
            return None
        text = self.stdout.strip()
        if not text.startswith("{"):
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def summary(self, outcome: str) -> HookRunSummary:
        """The run as ``openprogram/hooks`` shows it (a hook's ``last_result``)."""
        return HookRunSummary(exit_code=self.exit_code,
                              duration_ms=round(self.duration * 1000, 1),
                              timed_out=self.timed_out, at=time.time(), outcome=outcome,
                              error=self.error or None,
                              stderr=self.stderr.strip()[-500:] or None)


def _env(workspace: Path, hook: HookSpec, env_file: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _WITHHELD}
    event = hook.event
    if hook.plugin_root:
        env["CLAUDE_PLUGIN_ROOT"] = hook.plugin_root
    if env_file:
        env["CLAUDE_ENV_FILE"] = env_file
    env["CLAUDE_PROJECT_DIR"] = str(workspace)
    env["OPENPROGRAM_PROJECT_DIR"] = str(workspace)
    env["OPENPROGRAM_HOOK_EVENT"] = event
    return env


def sourced_env(path: Path, timeout: float = 10.0) -> dict[str, str]:
    """The variables a shell file (a SessionStart hook's ``CLAUDE_ENV_FILE``) sets or
    changes when sourced by ``sh``, as Claude Code sources it before its commands ({} when
    it is absent, empty, fails or takes longer than ``timeout``)."""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return {}
    except OSError:
        return {}
    base = {k: v for k, v in os.environ.items() if k not in _WITHHELD}
    try:
        child = procs.start("/bin/sh", "-c", '. "$1" >/dev/null 2>&1 && env -0', "sh",
                            str(path), cwd=path.parent, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=base)
    except OSError:
        return {}
    start = time.monotonic()
    out, _err, why = child.communicate(b"", until=start + timeout, stop=None,
                                       limit=MAX_CAPTURE * 16, poll=POLL)
    if why or child.returncode != 0:
        return {}
    found = {}
    for item in (out or b"").decode("utf-8", "replace").split("\0"):
        name, eq, value = item.partition("=")
        if eq and name and base.get(name) != value and name not in ("PWD", "SHLVL", "_",
                                                                    "OLDPWD"):
            found[name] = value
    return found


def _text(data: bytes | None) -> str:
    return (data or b"")[:MAX_CAPTURE * 4].decode("utf-8", "replace")[:MAX_CAPTURE]


def run_hook(hook: HookSpec, payload: dict[str, Any], workspace: Path, *,
             cancelled: Callable[[], bool] | None = None,
             env_file: str | None = None) -> HookRun:
    """Run a hook to completion, its timeout, or the turn's cancel (blocking; call off-loop)."""
    start = time.monotonic()
    stdin = json.dumps(payload, default=str).encode()
    try:
        child = procs.start("/bin/sh", "-c", hook.command, cwd=workspace,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(workspace, hook, env_file))
    except OSError as exc:
        return HookRun(hook, None, "", "", time.monotonic() - start,
                       error=f"could not start: {exc.strerror or exc}")
    out, err, why = child.communicate(stdin, until=start + hook.timeout, stop=cancelled,
                                      limit=MAX_CAPTURE * 4, poll=POLL)
    code = None if why else child.returncode
    return HookRun(hook, code, _text(out), _text(err), time.monotonic() - start,
                   timed_out=why == "timeout", cancelled=why == "cancel")
