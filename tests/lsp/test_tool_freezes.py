"""Through the real server: hostile files and patterns never freeze it, and it shuts down."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from tests.lsp.conftest import OpClient, Starter, write_script

FIFO = "pipe"


def _calls(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [
        {"tool_calls": [{"id": f"c{i}", "name": n, "arguments": a}]}
        for i, (n, a) in enumerate(calls)]
    return [*steps, {"text": "done"}]


HOSTILE = _calls(
    ("read_file", {"path": FIFO}),
    ("write_file", {"path": FIFO, "content": "x"}),
    ("edit_file", {"path": FIFO, "old_text": "a", "new_text": "b"}),
    ("grep", {"pattern": "needle"}),
    ("grep", {"pattern": "(a+)+$"}),
    ("run_command", {"command": "cat /proc/1/environ >/dev/null; echo ok"}),
)


async def _tool_durations(client: OpClient, count: int) -> list[float]:
    """Seconds from each tool.started to its tool.finished, while sessions keeps answering."""
    out = []
    for i in range(count):  # the server names calls itself: the i-th started is script call i
        await client.wait_event("tool.started", lambda e, i=i: _nth(client, e, i))
        began = time.monotonic()
        sessions = await asyncio.wait_for(client.call("openprogram/sessions", {}), 5)
        assert sessions["sessions"]
        cid = client.of_type("tool.started")[i]["data"]["toolCallId"]
        await client.wait_event("tool.finished",
                                lambda e, cid=cid: e["data"]["toolCallId"] == cid)
        out.append(time.monotonic() - began)
    return out


def _nth(client: OpClient, event: dict[str, Any], i: int) -> bool:
    started = client.of_type("tool.started")
    return len(started) > i and started[i] is event


async def test_hostile_files_and_patterns_answer_fast(start: Starter, tmp_path: Path,
                                                      workspace: Path) -> None:
    os.mkfifo(workspace / FIFO)
    (workspace / "a.txt").write_text("needle\n" + "a" * 20_000 + "!\n")

    def setup(client: OpClient) -> None:
        @client.feature("openprogram/requestPermission")
        def _permission(params: Any) -> dict[str, Any]:
            client.permission_requests.append(params)
            return {"outcome": "selected", "optionId": "allow_once"}

    client = await start(model=write_script(tmp_path / "s.json", HOSTILE), setup=setup)
    chat = asyncio.ensure_future(client.call("openprogram/chat", {"text": "go"}))
    durations = await _tool_durations(client, len(HOSTILE) - 1)
    result = await asyncio.wait_for(chat, 20)
    assert result["status"] == "done", result
    # a frozen tool never finishes (a FIFO blocks its reader forever, a backtracking engine
    # would not end on that pattern): 10 s is 10x an idle machine's worst, not a speed target
    assert max(durations) < 10.0, durations
    finished = {e["data"]["toolCallId"]: e["data"]["output"]
                for e in client.of_type("tool.finished")}
    outputs = [finished[e["data"]["toolCallId"]] for e in client.of_type("tool.started")]
    assert "FIFO" in outputs[0] and "FIFO" in outputs[1] and "FIFO" in outputs[2]
    assert outputs[3] == "a.txt:1: needle" and outputs[4] == "no matches"
    # the write and the edit were refused before any prompt; the command's card said sandboxed
    [request] = client.permission_requests
    assert request["toolCall"]["name"] == "run_command"
    assert request["toolCall"]["sandboxed"] is True
    started = time.monotonic()
    await asyncio.wait_for(client.shutdown_session(), 10)
    assert time.monotonic() - started < 2


BIG_PATTERN = r"[\w\s]{800}\d"
BIG_GREP = _calls(("grep", {"pattern": BIG_PATTERN}))


def _greps_running() -> list[int]:
    """Pids of ripgrep processes searching for BIG_PATTERN (this test's only)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                    if BIG_PATTERN.encode() in fh.read().split(b"\0"):
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


async def test_shutdown_during_a_long_grep(start: Starter, tmp_path: Path,
                                           workspace: Path) -> None:
    text = b" ".join(b"alpha beta gamma delta" for _ in range(200_000)) + b"\n"
    for i in range(10):
        (workspace / f"f{i}.txt").write_bytes(text)
    client = await start(model=write_script(tmp_path / "s.json", BIG_GREP))
    chat = asyncio.ensure_future(client.call("openprogram/chat", {"text": "go"}))
    await client.wait_event("tool.started")
    await asyncio.wait_for(client.call("openprogram/sessions", {}), 2)
    for _ in range(500):  # the search runs (unstopped, about 1.4 s on an idle machine)
        if _greps_running():
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the grep's ripgrep never started")
    await asyncio.wait_for(client.shutdown_session(), 10)
    # The shutdown stopped the search rather than waiting for it (no time bound: one would
    # be either looser than the search itself or flaky under load): the call ended cancelled,
    # and no ripgrep of it is left once the shutdown has answered.
    assert _greps_running() == []
    result = await asyncio.wait_for(chat, 5)
    assert result["status"] == "cancelled"
    [grep] = [e["data"] for e in client.of_type("tool.finished")]
    assert grep["cancelled"] is True and "no matches" not in grep["output"], grep
