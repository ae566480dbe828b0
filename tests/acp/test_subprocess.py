"""``openprogram-lsp acp`` as a child process, driven by the SDK client over real stdio."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from acp import text_block
from tests.acp.client import RecordingClient, agent_env, subprocess_agent, until
from tests.lsp.conftest import write_script


async def test_prompt_permission_write_and_checkpoint(home: Path, workspace: Path) -> None:
    client = RecordingClient(answer="allow_once")
    async with subprocess_agent(client, home, workspace) as (conn, _proc):
        session = await conn.new_session(cwd=str(workspace))
        resp = await asyncio.wait_for(conn.prompt(
            session_id=session.session_id, prompt=[text_block("write a.txt\nhello\n")]), 120)
    assert resp.stop_reason == "end_turn"
    assert (workspace / "a.txt").read_text() == "hello\n"
    assert client.ext_events("checkpoint.created")
    assert "permission" in client.names()


async def test_over_acp_the_model_is_told_it_has_no_diagnostics_or_navigation(
        home: Path, workspace: Path, tmp_path: Path) -> None:
    """An ACP client has no editor language servers to offer: the system prompt says so once,
    no lsp_* tool is offered (one called anyway answers at once), an edit asks nothing."""
    log = tmp_path / "calls.jsonl"
    model = write_script(tmp_path / "m.json", [
        {"tool_calls": [{"name": "lsp_references", "arguments": {
            "path": "a.py", "line": 1, "symbol": "x"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.py",
                                                             "content": "x = y\n"}}]},
        {"text": "done"}])
    client = RecordingClient()
    env = {"OPENPROGRAM_MODEL": model, "OPENPROGRAM_SCRIPTED_LOG": str(log)}
    async with subprocess_agent(client, home, workspace, "--permission-mode", "bypass",
                                env=env) as (conn, _proc):
        session = await conn.new_session(cwd=str(workspace))
        resp = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                  prompt=[text_block("go")]), 120)
    assert resp.stop_reason == "end_turn"
    assert (workspace / "a.py").read_text() == "x = y\n"
    outputs = json.dumps([u.model_dump(mode="json") for u in client.updates("tool_call_update")])
    assert "Unknown tool 'lsp_references'" in outputs
    calls = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert len(calls) == 3
    for call in calls:
        assert call["system"].count("No language-server diagnostics reach you here") == 1
        assert call["system"].count("There is no definition, references or symbol lookup") == 1
        assert not [t for t in call["tools"] if t.startswith("lsp_")]


async def test_cancel_a_running_command_within_a_second(home: Path, workspace: Path) -> None:
    client = RecordingClient(answer="allow_once")
    async with subprocess_agent(client, home, workspace, "--permission-mode", "bypass") as (
            conn, _proc):
        session = await conn.new_session(cwd=str(workspace))
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id,
                                                 prompt=[text_block("run sleep 30")]))
        await until(lambda: any(u.status == "in_progress"
                                for u in client.updates("tool_call_update")), "the command")
        began = time.monotonic()
        await conn.cancel(session_id=session.session_id)
        resp = await asyncio.wait_for(turn, 10)
        elapsed = time.monotonic() - began
    assert resp.stop_reason == "cancelled"
    assert elapsed < 1.0
    assert "permission" not in client.names()


FLOOD = """
import logging, os, sys, threading, time
from openprogram_lsp.cli import main

def flood():
    for _ in range(1000):  # start once the agent claimed stdout (writes before that are ours)
        if sys.stdout is sys.stderr:
            break
        time.sleep(0.01)
    for i in range(3000):
        print("stray print", i)
        os.write(1, b"raw fd-1 write\\n")
        logging.getLogger("openprogram_lsp.flood").warning("log line %d", i)

threading.Thread(target=flood, daemon=True).start()
sys.exit(main(["acp"]))
"""


def _frame(line: bytes) -> dict[str, object]:
    msg = json.loads(line)
    assert msg.get("jsonrpc") == "2.0", line
    return msg  # type: ignore[no-any-return]


def test_stdout_carries_only_acp_frames_under_a_log_flood(home: Path, workspace: Path) -> None:
    """Every stdout line is a JSON-RPC frame while prints, fd-1 writes and logs flood."""
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new",
         "params": {"cwd": str(workspace), "mcpServers": []}},
    ]
    errfile = (workspace.parent / "stderr.txt").open("wb")
    proc = subprocess.Popen([sys.executable, "-c", FLOOD], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=errfile,
                            env=agent_env(home), cwd=workspace)
    assert proc.stdin is not None and proc.stdout is not None
    frames = []
    try:
        for req in requests:
            proc.stdin.write(json.dumps(req).encode() + b"\n")
            proc.stdin.flush()
            while True:
                msg = _frame(proc.stdout.readline())
                frames.append(msg)
                if msg.get("id") == req["id"]:
                    break
        sid = frames[-1]["result"]["sessionId"]  # type: ignore[index]
        prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                  "params": {"sessionId": sid,
                             "prompt": [{"type": "text", "text": "list ."}]}}
        proc.stdin.write(json.dumps(prompt).encode() + b"\n")
        proc.stdin.flush()
        while True:
            msg = _frame(proc.stdout.readline())
            frames.append(msg)
            if msg.get("id") == 2:
                break
        time.sleep(0.5)  # let the flood run on while the stream is open
    finally:
        rest, _ = proc.communicate(timeout=30)
        errfile.close()
    err = (workspace.parent / "stderr.txt").read_bytes()
    for line in rest.splitlines():
        frames.append(_frame(line))
    assert frames[-1].get("id") == 2 or any(f.get("id") == 2 for f in frames)
    assert b"stray print" in err and b"raw fd-1 write" in err and b"log line" in err
    assert proc.returncode == 0


async def test_a_sessions_workspace_config_applies_not_the_agents_cwd(
        home: Path, workspace: Path, tmp_path: Path) -> None:
    (workspace / ".openprogram").mkdir()
    (workspace / ".openprogram" / "config.toml").write_text("[checkpoints]\nmax_file_bytes = 4\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    client = RecordingClient(answer="allow_once")
    async with subprocess_agent(client, home, elsewhere) as (conn, _proc):
        session = await conn.new_session(cwd=str(workspace))
        resp = await asyncio.wait_for(conn.prompt(
            session_id=session.session_id, prompt=[text_block("write big.txt\nhello\n")]), 120)
    assert resp.stop_reason == "end_turn"
    assert (workspace / "big.txt").read_text() == "hello\n"
    recorded = [f["path"] for e in client.ext_events("checkpoint.created")
                for f in (e.get("data") or e).get("files", [])]
    assert "big.txt" not in recorded  # over the workspace file's max_file_bytes
