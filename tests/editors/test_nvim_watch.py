"""Neovim watches a live session another editor drives, and undoes turns from its checkpoints.

Real headless Neovim, the real server (over ``serve --tcp`` for the shared session).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.editors.nvim import runner
from tests.lsp.tcp_helpers import Client, start_tcp_server, stop_tcp_server

pytestmark = [pytest.mark.timeout(180)]

DELTAS = frozenset({"text.delta", "thought.delta", "tool.output"})


def _squash(types: list[str]) -> list[str]:
    """Event types with runs of one stream delta type as one (a replay joins them)."""
    out: list[str] = []
    for t in types:
        if not (out and t in DELTAS and out[-1] == t):
            out.append(t)
    return out


async def test_neovim_joins_another_editors_turn_midway_and_shows_its_approval_read_only(
        tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    ready = tmp_path / "nvim.ready"
    server = await start_tcp_server(home)
    driver = await Client.connect(server.port)
    asked: list[Any] = []
    waiting = asyncio.Event()

    async def approve(method: str, params: Any) -> Any:
        asked.append(method)
        if method == "openprogram/askQuestion":
            return {"answer": "yes, ship it"}
        waiting.set()
        for _ in range(3000):  # the turn waits here until Neovim joined it (bounded: 30 s)
            if ready.exists():
                break
            await asyncio.sleep(0.01)
        return {"outcome": "selected", "optionId": "allow_once"}

    driver.on_request = approve
    try:
        assert "result" in await driver.initialize(server.token, ws)
        sid = (await driver.call("openprogram/chat", {"text": "hello"}))["sessionId"]
        # the other editor's turn streams and waits for its approval; then Neovim joins
        running = asyncio.ensure_future(driver.call(
            "openprogram/chat", {"text": "write notes.md\nfrom afar", "sessionId": sid},
            timeout=120))
        await asyncio.wait_for(waiting.wait(), 30)
        nvim = asyncio.ensure_future(asyncio.to_thread(
            runner.run_scenario, "watch_tcp", ws, model="offline", home=home,
            extra_env={"OP_CONNECT": str(server.port), "OP_SESSION": sid,
                       "OP_READY": str(ready), "OP_TURNS": "2"}))
        turn = await running
        assert turn["status"] == "done" and asked == ["openprogram/requestPermission"]
        assert ready.exists(), "Neovim did not subscribe"
        question = await driver.call("openprogram/chat", {"text": "ask Deploy now?",
                                                          "sessionId": sid})
        assert question["status"] == "done" and asked[-1] == "openprogram/askQuestion"
        out = await asyncio.wait_for(nvim, 150)
        tid = turn["assistantNodeId"]
        in_driver = _squash([e["type"] for e in driver.events if e.get("turnId") == tid])
        in_driver = in_driver[in_driver.index("turn.started"):]  # a replay starts there
        in_nvim = _squash([e["type"] for e in out["seen"] if e.get("turn") == tid])
        # every event of the turn, in order (what streamed before Neovim joined replayed, its
        # text pieces joined); plus the read-only card only the watcher gets
        assert [t for t in in_nvim if t != "permission.requested"] == in_driver
        assert in_nvim.index("permission.requested") < in_nvim.index("permission.resolved")
        streaming = "\n".join(out["streaming"])  # as the approval waited: the turn so far
        assert "## You · in another editor" in streaming and "write notes.md" in streaming
        assert streaming.count("write notes.md") == 1  # not also from the history
        assert out["replayed"] > 0
        notes = out["panel_notes"]
        card = "approval asked in another editor (read-only here): Write notes.md"
        assert any(n.startswith(card) for n in notes), notes
        assert "Write notes.md: allowed once in the other editor" in notes
        assert (ws / "notes.md").read_text().startswith("from afar")
        # the other editor's question and its answer, read-only here
        assert "question: Deploy now?" in notes and "answer: yes, ship it" in notes
        assert "from afar" in "\n".join(out["panel"])  # the history, redrawn at the end
    finally:
        await driver.close()
        await stop_tcp_server(server)


def test_undo_a_turn_from_the_checkpoint_view_and_undo_the_undo(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    model = runner.write_script(tmp_path / "s.json", [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt",
                                                               "content": "one\n"}}]},
        {"text": "Created."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt",
                                                               "content": "two\n"}}]},
        {"text": "Changed."},
    ])
    out = runner.run_scenario("undo_turn", ws, model=model, home=home)
    assert out["v2"] == "two\n"
    assert "X undo turn" in out["winbar"]
    assert out["after_undo"] == "one\n"  # X: the file as it was before the second turn
    assert out["undo_note"].startswith("openprogram: undid turn ")
    assert "notes.txt" in out["undo_note"] and "undo this with U" in out["undo_note"]
    assert out["after_cmd"] == "one\n"  # :OpenProgramUndo: the newest turn again


def test_undo_names_a_file_too_large_to_record_and_leaves_it(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "data.bin").write_bytes(b"\x01" * 6_000_000)  # over checkpoints.max_file_bytes
    model = runner.write_script(tmp_path / "s.json", [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "keep.txt",
                                                               "content": "one\n"}}]},
        {"text": "Created."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "data.bin",
                                                               "content": "small\n"}}]},
        {"text": "Truncated."},
    ])
    out = runner.run_scenario("undo_unrecorded", ws, model=model, home=home)
    assert out["truncated"] == "small\n"
    assert out["after_undo"] == "small\n"  # never deleted
    note = out["undo_note"]
    assert note.startswith("openprogram: undid turn "), note
    assert "NOT restored, left as they are: data.bin (larger than checkpoints.max_file_bytes" \
        in note, note
