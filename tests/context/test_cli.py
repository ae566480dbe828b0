"""Twenty turns through the real CLI with an 8,000-token window and the offline model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.forkserver import run_command

WINDOW = "8000"


def cli(args: list[str], *, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENPROGRAM_HOME": str(home), "OPENPROGRAM_CONTEXT_WINDOW": WINDOW}
    env.pop("OPENPROGRAM_MODEL", None)
    return run_command([sys.executable, "-m", "openprogram_lsp.cli", *args], cwd=cwd,
                       env=env, timeout=120)


def events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_twenty_cli_turns_in_an_8k_window_all_succeed_and_compact(
        tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "cli-home"
    sid: str | None = None
    compacted: list[dict[str, Any]] = []
    body = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(30))
    for i in range(19):
        text = f"write notes/n{i}.md\n{body}" if i % 2 == 0 else f"read notes/n{i - 1}.md"
        args = ["chat", "--json", "--permission-mode", "bypass"]
        if sid:
            args += ["--session", sid]
        proc = cli([*args, text], cwd=workspace, home=home)
        assert proc.returncode == 0, (i, proc.stdout[-2000:], proc.stderr[-2000:])
        evs = events(proc.stdout)
        result = evs[-1]
        assert result["type"] == "result" and result["data"]["status"] == "done", result
        sid = result["data"]["sessionId"]
        compacted += [e for e in evs if e["type"] == "context.compacted"]
    assert sid is not None
    # the 20th turn: the manual command through the CLI flag
    proc = cli(["chat", "--json", "--session", sid, "--compact"], cwd=workspace, home=home)
    assert proc.returncode == 0, proc.stderr[-2000:]
    evs = events(proc.stdout)
    assert evs[-1]["data"]["status"] == "done"
    manual = [e for e in evs if e["type"] == "context.compacted"]
    assert [e["data"]["path"] for e in manual] == ["manual"]
    assert compacted, "turn-start compaction should have run in an 8k window"
    for e in compacted:
        assert e["sessionId"] == sid and e["data"]["contextWindow"] == 8000
        assert e["data"]["tokensAfter"] < e["data"]["tokensBefore"]
    # every turn's ContextCommit is readable with the history
    hist = cli(["history", sid, "--json"], cwd=workspace, home=home)
    nodes = json.loads(hist.stdout)
    replies = [n for n in nodes if n["role"] == "assistant"]
    assert len(replies) == 20
    assert all(n["metadata"]["context"]["contextWindow"] == 8000 for n in replies)
    # the prompt leaves at least an eighth of the window (1,000) for the reply: the estimate
    # counts the whole 2,000-token reserve, which a request asks for only when it fits
    assert all(n["metadata"]["context"]["estimate"] - 2000 + 1000 <= 8000 for n in replies)
    assert replies[-1]["metadata"]["context"]["path"] == "manual"
    assert (workspace / "notes" / "n18.md").read_text() == body
