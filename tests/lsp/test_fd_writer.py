"""Every byte of a large answer reaches the client, whatever stdout's mode: a non-blocking
descriptor that fills (one socket given as the server's stdin and stdout), and short writes."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.core.fsutil import write_all
from openprogram_lsp.core.types import Node
from openprogram_lsp.lsp.fd_writer import FdWriter
from openprogram_lsp.store.session_store import SessionStore
from tests import forkserver
from tests.lsp.conftest import SERVER
from tests.lsp.tcp_helpers import encode, read_frame

pytestmark = pytest.mark.timeout(120)


def test_a_full_non_blocking_pipe_is_waited_out_and_nothing_is_lost() -> None:
    r, w = os.pipe()
    os.set_blocking(w, False)
    data = bytes(range(256)) * 8192  # 2 MiB: some 32 times what the pipe holds
    got = bytearray()

    def drain() -> None:
        while chunk := os.read(r, 4096):
            got.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        write_all(w, data)
    finally:
        os.close(w)
        reader.join(30)
        os.close(r)
    assert bytes(got) == data


def test_the_writer_writes_past_a_short_write(monkeypatch: pytest.MonkeyPatch) -> None:
    r, w = os.pipe()
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, view: real(fd, view[:3]))  # 3 bytes a call
    with open(w, "wb", buffering=0) as raw:  # what sys.stdout.buffer is under -u
        FdWriter(raw).write(b"Content-Length: 2\r\n\r\n{}")
        monkeypatch.undo()
        assert os.read(r, 100) == b"Content-Length: 2\r\n\r\n{}"
    os.close(r)


def _session(home: Path, workspace: Path, nodes: int, size: int) -> str:
    store = SessionStore(home)
    sid = store.create_session(title="long", workspace=str(workspace))
    pred = None
    for i in range(nodes):
        pred = store.append(sid, Node(id=f"n{i:04d}", role="user" if i % 2 == 0 else "assistant",
                                      text=f"{i} " + "x" * size, predecessor=pred,
                                      status="done"), advance_head=True).id
    store.commit_turn(sid, "long")
    return sid


async def _answer(reader: asyncio.StreamReader, msg_id: int) -> dict[str, Any]:
    async with asyncio.timeout(30):  # a truncated answer leaves the reader inside its frame
        while True:
            message = await read_frame(reader)
            assert message is not None, "the server closed the link"
            if "method" not in message and message.get("id") == msg_id:
                return message


async def test_a_large_answer_arrives_whole_when_stdout_is_a_shared_non_blocking_socket(
        tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    sid = _session(home, workspace, 300, 3000)  # a page of about a megabyte
    ours, theirs = socket.socketpair()
    # the server's side holds little, so one write(2) of the page cannot take all of it
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env.update(OPENPROGRAM_HOME=str(home), OPENPROGRAM_MODEL="offline", PYTHONUNBUFFERED="1")
    log = tmp_path / "stderr"
    with log.open("wb") as err:  # one socket as stdin and stdout: reading stdin on the event
        forked = forkserver.forkable(SERVER)  # loop makes both non-blocking
        proc: Any = await (
            asyncio.create_subprocess_exec(*SERVER, stdin=theirs, stdout=theirs, stderr=err,
                                           env=env, cwd=workspace) if forked is None
            else forkserver.start_on(forked, (theirs.fileno(), theirs.fileno(), err.fileno()),
                                     env=env, cwd=workspace))
    theirs.close()
    reader, writer = await asyncio.open_unix_connection(sock=ours)
    try:
        writer.write(encode({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}}))
        assert "capabilities" in (await _answer(reader, 1))["result"]
        writer.write(encode({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        writer.write(encode({"jsonrpc": "2.0", "id": 2, "method": "openprogram/history",
                             "params": {"sessionId": sid, "limit": 1000}}))
        page = (await _answer(reader, 2))["result"]
        assert len(json.dumps(page)) > 900_000
        assert [n["id"] for n in page["nodes"]] == [f"n{i:04d}" for i in range(300)]
        writer.write(encode({"jsonrpc": "2.0", "id": 3, "method": "openprogram/sessions",
                             "params": {}}))
        assert [s["id"] for s in (await _answer(reader, 3))["result"]["sessions"]] == [sid]
        writer.write(encode({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}))
        assert (await _answer(reader, 4))["result"] is None
        writer.write(encode({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        writer.close()
        if proc.returncode is None:
            proc.kill()
            await asyncio.wait_for(proc.wait(), 30)
    stderr = log.read_bytes()
    assert b"Traceback" not in stderr and b"Error sending data" not in stderr, stderr.decode()
