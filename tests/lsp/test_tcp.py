"""``serve --tcp``: only the user's editors get in, each keeps its own state, and a session's
events reach every editor that subscribed to it. Real loopback sockets, a real server process.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests import forkserver
from tests.lsp.tcp_helpers import Client, TcpServer, start_tcp_server, stop_tcp_server

pytestmark = pytest.mark.timeout(90)


@pytest_asyncio.fixture
async def tcp(tmp_path: Path) -> AsyncIterator[TcpServer]:
    server = await start_tcp_server(tmp_path / "home")
    yield server
    await stop_tcp_server(server)


@pytest_asyncio.fixture
async def opened() -> AsyncIterator[list[Client]]:
    out: list[Client] = []
    yield out
    for c in out:
        await c.close()


async def _client(tcp: TcpServer, opened: list[Client], workspace: Path, **kw: Any) -> Client:
    c = await Client.connect(tcp.port)
    opened.append(c)
    resp = await c.initialize(tcp.token, workspace, **kw)
    assert "result" in resp, resp
    return c


async def _serving(tcp: TcpServer, workspace: Path) -> None:
    """A fresh connection still authenticates and gets answers."""
    c = await Client.connect(tcp.port)
    try:
        assert "result" in await c.initialize(tcp.token, workspace)
        assert "sessions" in await c.call("openprogram/sessions", {})
    finally:
        await c.close()


def _approve(choice: str, seen: list[Any]) -> Any:
    async def handler(method: str, params: Any) -> Any:
        seen.append((method, params))
        if method == "openprogram/requestPermission":
            return {"outcome": "selected", "optionId": choice}
        return None
    return handler


async def test_run_file_is_private_and_names_port_pid_and_token(tcp: TcpServer) -> None:
    data = json.loads(tcp.run_file.read_text())
    assert data == {"port": tcp.port, "pid": tcp.proc.pid, "host": "127.0.0.1",
                    "token": tcp.token}
    assert tcp.run_file.name == f"{tcp.port}.json"
    assert stat.S_IMODE(tcp.run_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(tcp.run_file.parent.stat().st_mode) == 0o700
    assert len(tcp.token) >= 32


async def test_unauthenticated_clients_are_refused_and_closed(tcp: TcpServer,
                                                              workspace: Path) -> None:
    for token in (None, "wrong-token-wrong-token"):
        c = await Client.connect(tcp.port)
        resp = await c.initialize(token, workspace)
        assert resp["error"]["code"] == -32006
        await asyncio.wait_for(c.closed.wait(), 1)
        await c.close()
    # any other first message is refused too, before it is processed
    c = await Client.connect(tcp.port)
    resp = await c.request("openprogram/chat", {"text": "run id > pwned.txt"})
    assert resp["error"]["code"] == -32006
    await asyncio.wait_for(c.closed.wait(), 1)
    await c.close()
    assert not (workspace / "pwned.txt").exists()
    assert not list((Path(tcp.run_file).parent.parent / "sessions").glob("*"))
    await _serving(tcp, workspace)


async def test_an_http_post_from_a_web_page_is_closed_and_nothing_runs(
        tcp: TcpServer, workspace: Path) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "openprogram/chat",
                       "params": {"text": "run id > pwned.txt"}})
    for request in (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{tcp.port}\r\nContent-Type: text/plain\r\n"
        f"Origin: http://evil.example\r\nContent-Length: {len(body)}\r\n\r\n{body}",
        f"Host: 127.0.0.1\r\nContent-Length: {len(body)}\r\n\r\n{body}",
        f"Content-Length: {len(body)}\r\nOrigin: http://evil.example\r\n\r\n{body}",
    ):
        reader, writer = await asyncio.open_connection("127.0.0.1", tcp.port)
        writer.write(request.encode())
        assert await asyncio.wait_for(reader.read(), 1) == b""  # closed, nothing answered
        writer.close()
    assert not (workspace / "pwned.txt").exists()
    await _serving(tcp, workspace)


async def test_a_second_clients_bypass_leaves_the_first_asking(
        tcp: TcpServer, workspace: Path, opened: list[Client]) -> None:
    first_seen: list[Any] = []
    first = await _client(tcp, opened, workspace)
    first.on_request = _approve("reject_once", first_seen)
    second = await _client(tcp, opened, workspace, options={"permissionMode": "bypass"})
    result = await first.call("openprogram/chat", {"text": "run id > pwned.txt"})
    assert result["status"] == "done"
    assert [m for m, _ in first_seen] == ["openprogram/requestPermission"]
    assert not (workspace / "pwned.txt").exists()
    # the second editor's own turns do run unprompted, and its answers come to it
    own = await second.call("openprogram/chat", {"text": "run echo ok > mine.txt"})
    assert own["status"] == "done" and (workspace / "mine.txt").exists()
    assert second.server_requests == []
    # the first editor is still asked, and still answered
    again = await first.call("openprogram/chat", {"text": "run id > pwned.txt",
                                                  "sessionId": result["sessionId"]})
    assert again["status"] == "done" and len(first_seen) == 2
    assert not (workspace / "pwned.txt").exists()


async def test_connections_end_alone(tcp: TcpServer, workspace: Path,
                                     opened: list[Client]) -> None:
    # a bare connect + close
    _, writer = await asyncio.open_connection("127.0.0.1", tcp.port)
    writer.close()
    await writer.wait_closed()
    stay = await _client(tcp, opened, workspace)
    leave = await _client(tcp, opened, workspace)
    assert (await leave.request("shutdown"))["result"] is None
    leave.send({"jsonrpc": "2.0", "method": "exit"})
    await asyncio.wait_for(leave.closed.wait(), 2)
    assert tcp.alive
    assert (await stay.call("openprogram/chat", {"text": "hello"}))["status"] == "done"
    await _serving(tcp, workspace)


async def test_two_editors_watch_one_live_session(tcp: TcpServer, workspace: Path,
                                                  opened: list[Client]) -> None:
    driver_seen: list[Any] = []
    driver = await _client(tcp, opened, workspace)
    driver.on_request = _approve("allow_once", driver_seen)
    watcher = await _client(tcp, opened, workspace)
    first = await driver.call("openprogram/chat", {"text": "hello"})
    sid = first["sessionId"]
    assert watcher.events == []  # not subscribed: nothing of another editor's session
    sub = await watcher.call("openprogram/subscribe", {"sessionId": sid})
    assert sub == {"sessionId": sid, "headId": first["headId"]}  # no turn running
    before = len(driver.events)
    result = await driver.call("openprogram/chat", {"text": "write notes.txt\nhi there",
                                                    "sessionId": sid})
    assert result["status"] == "done"
    await watcher.wait_event("turn.finished",
                             lambda e: e["turnId"] == result["assistantNodeId"])
    turn = result["assistantNodeId"]
    driver_turn = [e for e in driver.events[before:] if e.get("turnId") == turn]
    watcher_turn = [e for e in watcher.events if e.get("turnId") == turn]
    own_only = {"permission.requested"}
    assert [e for e in watcher_turn if e["type"] not in own_only] == driver_turn
    assert {"turn.started", "tool.started", "tool.finished", "turn.finished"} <= \
        {e["type"] for e in driver_turn}
    # the approval went to the driver only; the watcher saw it read-only, with its outcome
    assert [m for m, _ in driver_seen] == ["openprogram/requestPermission"]
    assert watcher.server_requests == []
    card = watcher.of_type("permission.requested")
    assert len(card) == 1 and card[0]["data"]["readOnly"] is True
    resolved = watcher.of_type("permission.resolved")
    assert resolved[0]["data"]["kind"] == "allow_once"
    assert card[0]["data"]["toolCall"]["toolCallId"] == resolved[0]["data"]["toolCallId"]
    assert not driver.of_type("permission.requested")
    # the watcher can drive the session too, and the first editor sees that turn
    mine = await watcher.call("openprogram/chat", {"text": "list .", "sessionId": sid})
    await driver.wait_event("turn.finished", lambda e: e["turnId"] == mine["assistantNodeId"])
    # an unsubscribed editor stops receiving the session
    assert (await watcher.call("openprogram/unsubscribe", {"sessionId": sid}))["accepted"]


async def test_a_question_is_answered_only_by_the_editor_that_started_the_turn(
        tcp: TcpServer, workspace: Path, opened: list[Client]) -> None:
    asked = asyncio.Event()

    async def slow_answer(method: str, params: Any) -> Any:
        asked.set()
        await asyncio.sleep(0.3)
        return {"answer": "blue"}

    driver = await _client(tcp, opened, workspace)
    driver.on_request = slow_answer
    watcher = await _client(tcp, opened, workspace)
    sid = (await driver.call("openprogram/chat", {"text": "hello"}))["sessionId"]
    await watcher.call("openprogram/subscribe", {"sessionId": sid})
    turn = asyncio.ensure_future(driver.call("openprogram/chat", {
        "text": "ask what colour?", "sessionId": sid}))
    event = await watcher.wait_event("question.asked")
    resp = await watcher.request("openprogram/answer", {
        "questionId": event["data"]["questionId"], "answer": "red"})
    assert resp["error"]["code"] == -32006
    result = await turn
    assert "blue" in result["text"]
    replied = await watcher.wait_event("question.replied")
    assert replied["data"]["answer"] == "blue"


FRAMES: list[tuple[str, bytes]] = [
    ("lowercase header", b"content-length: 2\r\n\r\n{}"),
    ("non-numeric length", b"Content-Length: abc\r\n\r\n{}"),
    ("length too small", b'Content-Length: 5\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"x"}'),
    ("length too large", b'Content-Length: 90\r\n\r\n{"jsonrpc":"2.0","id":1}'),
    ("stray bytes", b"garbage\r\n\r\n"),
    ("huge length", b"Content-Length: 1000000000000\r\n\r\n{}"),
    ("over the limit", b"Content-Length: 70000000\r\n\r\n{}"),
    ("invalid json", b"Content-Length: 9\r\n\r\n{not json"),
    ("a batch", b'Content-Length: 2\r\n\r\n[]'),
    ("not an object", b"Content-Length: 2\r\n\r\n42"),
    ("no jsonrpc", b'Content-Length: 30\r\n\r\n{"id":7,"method":"initialize"}'),
]


ANSWERED = {"invalid json": -32700, "a batch": -32600, "not an object": -32600,
            "no jsonrpc": -32600, "huge length": -32600, "over the limit": -32600,
            "non-numeric length": -32700, "length too small": -32700}
STAYS_OPEN = {"invalid json", "a batch", "not an object", "no jsonrpc", "lowercase header"}


async def _try_frame(tcp: TcpServer, name: str, data: bytes) -> bytes:
    """Send one bad frame; what came back before the answer or the close.

    A frame the server mishandles leaves the connection waiting forever; the 10 s bound is 10x
    what an idle machine needs (a loaded one took just over 1 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", tcp.port)
    writer.write(data)
    got = b""
    try:
        async with asyncio.timeout(10.0):
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    break  # closed
                got += chunk
                if b"}}" in got and name in STAYS_OPEN:
                    break  # answered; the framing is intact, so the link stays
    except TimeoutError:
        raise AssertionError(f"{name}: neither answered nor closed in 10 s (got {got!r})") \
            from None
    finally:
        writer.close()
    return got


async def test_malformed_frames_are_answered_or_closed_never_left_waiting(
        tcp: TcpServer, workspace: Path) -> None:
    for name, data in FRAMES:
        got = await _try_frame(tcp, name, data)
        if name in ANSWERED:
            head, _, rest = got.partition(b"\r\n\r\n")
            answer = json.loads(rest[:int(head.split(b":")[1].split(b"\r\n")[0])])
            assert answer["error"]["code"] == ANSWERED[name], (name, answer)
            assert answer["id"] == (7 if name == "no jsonrpc" else None), name
        await _serving(tcp, workspace)


async def test_lowercase_headers_are_read(tcp: TcpServer, workspace: Path) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", tcp.port)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "capabilities": {}, "rootUri": workspace.as_uri(),
        "initializationOptions": {"token": tcp.token}}}).encode()
    writer.write(b"content-length: %d\r\ncontent-type: application/vscode-jsonrpc\r\n\r\n%s"
                 % (len(body), body))
    from tests.lsp.tcp_helpers import read_frame
    answer = await asyncio.wait_for(read_frame(reader), 10)
    assert answer is not None and "capabilities" in answer["result"]
    writer.close()


async def test_idle_exit_stops_the_server_after_its_last_connection(
        tmp_path: Path, workspace: Path) -> None:
    server = await start_tcp_server(tmp_path / "home2", "--idle-exit", "0.5")
    try:
        c = await Client.connect(server.port)
        assert "result" in await c.initialize(server.token, workspace)
        await asyncio.sleep(0.8)
        assert server.alive  # a connection is open
        await c.close()
        assert await asyncio.wait_for(server.proc.wait(), 10) == 0
        assert not server.run_file.exists()
    finally:
        await stop_tcp_server(server)


async def test_a_token_file_fixes_the_token(tmp_path: Path, workspace: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("a-fixed-token-of-the-user\n")
    os.chmod(token_file, 0o644)
    loose = await forkserver.start_async(
        ["serve", "--tcp", "0", "--token-file", str(token_file)],
        env={**os.environ, "OPENPROGRAM_HOME": str(tmp_path / "h")},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    assert loose.stderr is not None
    err = await asyncio.wait_for(loose.stderr.read(), 30)
    assert await asyncio.wait_for(loose.wait(), 30) != 0 and b"chmod 600" in err
    assert len(err.decode().strip().splitlines()) == 1
    os.chmod(token_file, 0o600)
    server = await start_tcp_server(tmp_path / "home3", "--token-file", str(token_file))
    try:
        assert server.token == "a-fixed-token-of-the-user"
        c = await Client.connect(server.port)
        assert "result" in await c.initialize("a-fixed-token-of-the-user", workspace)
        await c.close()
    finally:
        await stop_tcp_server(server)


async def test_a_late_subscriber_gets_the_running_turn_so_far_then_the_rest_live(
        tcp: TcpServer, workspace: Path, opened: list[Client]) -> None:
    asked, gate = asyncio.Event(), asyncio.Event()

    async def approve(method: str, params: Any) -> Any:
        if method == "openprogram/requestPermission":
            asked.set()
            await gate.wait()  # the turn waits here while the others subscribe
            return {"outcome": "selected", "optionId": "allow_once"}
        return None

    driver = await _client(tcp, opened, workspace)
    driver.on_request = approve
    sid = (await driver.call("openprogram/chat", {"text": "hello"}))["sessionId"]
    turn = asyncio.ensure_future(driver.call(
        "openprogram/chat", {"text": "write notes.txt\nhi there", "sessionId": sid}))
    await asyncio.wait_for(asked.wait(), 30)
    late = await _client(tcp, opened, workspace)
    plain = await _client(tcp, opened, workspace)
    sub = await late.call("openprogram/subscribe", {"sessionId": sid, "replay": True})
    assert (await plain.call("openprogram/subscribe", {"sessionId": sid}))["runningTurnId"] \
        == sub["runningTurnId"]
    gate.set()
    result = await turn
    assert result["status"] == "done"
    tid = result["assistantNodeId"]
    await late.wait_event("turn.finished", lambda e: e["turnId"] == tid)
    await plain.wait_event("turn.finished", lambda e: e["turnId"] == tid)
    mine = [e for e in late.events if e.get("turnId") == tid]
    replayed = [e for e in mine if e.get("replayed")]
    live = [e for e in mine if not e.get("replayed")]
    assert mine == replayed + live  # the replay first, then only live events
    assert [e["type"] for e in replayed][:1] == ["turn.started"]
    assert replayed[0]["data"]["text"] == "write notes.txt\nhi there"
    assert "tool.started" in [e["type"] for e in replayed]
    [card] = [e for e in replayed if e["type"] == "permission.requested"]
    assert card["data"]["readOnly"] is True
    assert [e["type"] for e in live][-1] == "turn.finished"
    assert "permission.resolved" in [e["type"] for e in live]
    # nothing twice, nothing missing: the same calls and the same text as the driver saw
    theirs = [e for e in driver.events if e.get("turnId") == tid]

    def text(events: list[dict[str, Any]]) -> str:
        return "".join(e["data"]["text"] for e in events if e["type"] == "text.delta")

    def calls(events: list[dict[str, Any]], kind: str) -> list[str]:
        return [e["data"]["toolCallId"] for e in events if e["type"] == kind]

    assert text(mine) == text(theirs) != ""
    for kind in ("tool.started", "tool.finished"):
        assert calls(mine, kind) == calls(theirs, kind) != []
    # an editor that did not ask for the replay gets only what came after it subscribed
    assert not [e for e in plain.events if e.get("replayed")]
    assert "turn.started" not in [e["type"] for e in plain.events if e.get("turnId") == tid]
