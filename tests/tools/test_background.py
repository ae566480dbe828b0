"""Background commands: start, read new output, stop the whole tree; one approval; the end."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.tools.base import ToolContext, ToolOutput
from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.builtin.background import BUFFER_BYTES
from openprogram_lsp.tools.registry import ToolRegistry
from tests.conftest import RecordingApprover


@pytest.fixture
def reg() -> ToolRegistry:
    return ToolRegistry(builtin_tools())


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace, session_id="s1")


async def call(reg: ToolRegistry, ctx: ToolContext, name: str, **args: object) -> ToolOutput:
    tool = reg.get(name)
    assert tool is not None
    return await tool.run(tool.parse(dict(args)), ctx)


async def until(reg: ToolRegistry, ctx: ToolContext, job: str, text: str) -> str:
    seen = ""
    for _ in range(200):
        seen += (await call(reg, ctx, "command_output", id=job)).text + "\n"
        if text in seen:
            return seen
        await asyncio.sleep(0.05)
    raise AssertionError(f"{text!r} never came: {seen}")


def running(marker: str) -> bool:
    """Whether a live process has ``marker`` in its command line (any PID namespace)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{pid}/stat") as fh:
                zombie = fh.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            continue
        if marker.encode() in cmdline and not zombie:
            return True
    return False


async def test_start_read_and_end(reg: ToolRegistry, ctx: ToolContext,
                                  workspace: Path) -> None:
    started = await call(reg, ctx, "run_command", background=True,
                         command="echo one; while [ ! -e go ]; do sleep 0.02; done; echo two")
    assert started.text.startswith("Started in the background as bg_1.")
    assert started.data["id"] == "bg_1"
    first = await until(reg, ctx, "bg_1", "one")
    assert "[bg_1: running" in first
    (workspace / "go").touch()
    seen = await until(reg, ctx, "bg_1", "exited with code")
    assert "two" in seen and "one" not in seen  # only what is new since the last read
    assert "[bg_1: exited with code 0]\n(no new output)" in \
        (await call(reg, ctx, "command_output", id="bg_1")).text
    failed = await call(reg, ctx, "run_command", command="echo bad; exit 3", background=True)
    out = await until(reg, ctx, failed.data["id"], "exited with code 3")
    assert "bad" in out


async def test_stop_kills_the_whole_tree(reg: ToolRegistry, ctx: ToolContext,
                                         workspace: Path) -> None:
    marker = f"bgtest-{os.getpid()}-{id(ctx)}"  # the grandchild shell's $0: ours alone
    await call(reg, ctx, "run_command", background=True,
               command=f"sh -c 'sleep 300; :' {marker} & echo ready; wait")
    await until(reg, ctx, "bg_1", "ready")
    assert running(marker)
    out = await call(reg, ctx, "command_stop", id="bg_1")
    assert out.text.startswith("Stopped bg_1 (`sh -c 'sleep 300; :'")
    assert "[bg_1: stopped by command_stop]" in out.text
    assert not running(marker)  # the stop waited for the tree to end
    again = await call(reg, ctx, "command_stop", id="bg_1")
    assert again.text.startswith("bg_1 had already ended.")


async def test_ids_belong_to_their_session(reg: ToolRegistry, ctx: ToolContext,
                                           workspace: Path) -> None:
    await call(reg, ctx, "run_command", command="sleep 30", background=True)
    other = ToolContext(workspace=workspace, session_id="s2")
    with pytest.raises(ToolError, match="no background command 'bg_1' in this session"):
        await call(reg, other, "command_output", id="bg_1")
    with pytest.raises(ToolError, match="known: bg_1"):
        await call(reg, ctx, "command_stop", id="bg_9")
    await reg.aclose()  # the server ends: so do its background commands
    out = await call(reg, ctx, "run_command", command="true", background=True)
    assert out.data["id"] == "bg_2"


async def test_timeouts_in_seconds_or_milliseconds(reg: ToolRegistry, ctx: ToolContext) -> None:
    tool = reg.get("run_command")
    assert tool is not None
    assert tool.parse({"command": "x", "timeout": 90}).timeout == 90  # type: ignore[attr-defined]
    assert tool.parse({"command": "x", "timeout": 1500}).timeout == 1.5  # type: ignore[attr-defined]
    with pytest.raises(ToolError, match="at most 600 seconds"):
        tool.parse({"command": "x", "timeout": 700_000})
    out = await call(reg, ctx, "run_command", command="sleep 30", background=True,
                     timeout=300)  # 300 s: not milliseconds
    assert "killed after 300 s" in out.text
    await call(reg, ctx, "run_command", command="sleep 30", background=True, timeout=1200)
    assert "killed by its timeout" in await until(reg, ctx, "bg_2", "killed by its timeout")
    await reg.aclose()


async def test_output_is_bounded(reg: ToolRegistry, ctx: ToolContext, workspace: Path) -> None:
    await call(reg, ctx, "run_command", background=True,
               command="head -c 2000000 /dev/zero | tr '\\0' x; echo; echo END; touch done")
    for _ in range(3000):  # unread meanwhile: the buffer keeps its head and tail only
        if (workspace / "done").exists():
            break
        await asyncio.sleep(0.02)
    assert (workspace / "done").exists()
    reads: list[str] = []
    for _ in range(200):  # what was still in the pipe may come in a second read
        reads.append((await call(reg, ctx, "command_output", id="bg_1")).text)
        if "exited with code" in reads[-1]:
            break
        await asyncio.sleep(0.05)
    seen = "\n".join(reads)
    assert "END" in seen and "bytes of output cut" in reads[0]
    assert all(len(r.encode()) < BUFFER_BYTES + 1000 for r in reads)  # each read is bounded


def test_one_approval_covers_the_start_only(make_dispatcher: Callable[..., Dispatcher],
                                            script: Callable[[list[dict]], str],
                                            workspace: Path) -> None:
    approver = RecordingApprover("allow_once")
    d = make_dispatcher(script([
        {"tool_calls": [{"name": "run_command", "arguments": {
            "command": "echo serving; sleep 60", "background": True,
            "description": "Start the server"}}]},
        {"tool_calls": [{"name": "command_output", "arguments": {"id": "bg_1"}}]},
        {"tool_calls": [{"name": "command_stop", "arguments": {"id": "bg_1"}}]},
        {"text": "Stopped it."}]), approver=approver)
    r = d.process_user_turn(TurnRequest(text="serve"))
    assert r.status == "done"
    [asked] = approver.requests
    assert asked.tool_call.name == "run_command"
    assert asked.tool_call.title == "Run `echo serving; sleep 60` in the background"
    calls = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls or []
    assert [(c.name, c.status) for c in calls] == [
        ("run_command", "completed"), ("command_output", "completed"),
        ("command_stop", "completed")]
    assert calls[0].output.startswith("Started in the background as bg_1")
    assert "[bg_1: stopped by command_stop]" in (calls[2].output or "")
    assert os.path.isdir(workspace)


async def test_a_deleted_session_ends_its_jobs_only(reg: ToolRegistry, ctx: ToolContext,
                                                     workspace: Path) -> None:
    await call(reg, ctx, "run_command", command="sleep 30", background=True)
    other = ToolContext(workspace=workspace, session_id="s2")
    await call(reg, other, "run_command", command="sleep 30", background=True)
    await reg.end_session("s1")
    with pytest.raises(ToolError, match="no background command 'bg_1'"):
        await call(reg, ctx, "command_output", id="bg_1")
    assert "[bg_2: running" in (await call(reg, other, "command_output", id="bg_2")).text
    await reg.aclose()


async def test_a_background_command_names_a_repository_it_made_below_the_root(
        reg: ToolRegistry, ctx: ToolContext, workspace: Path) -> None:
    """A sandboxed background command's output ends with what it made below the root."""
    out = await call(reg, ctx, "run_command", command="mkdir -p p && git init -q p",
                     background=True)
    assert out.data["sandboxed"] is True, out.text
    seen = await until(reg, ctx, out.data["id"], "Review them")
    assert "p/.git (a git repository: its config and hooks run with git there)" in seen, seen
