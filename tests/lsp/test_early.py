"""``initialize`` answered before the server is built (lsp/early.py): the same answer as the
server's own, sent once; the rest of the conversation as before; a server that then cannot
start tells the editor why."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.lsp import capabilities
from openprogram_lsp.lsp.early import initialize_answer
from openprogram_lsp.lsp.server import build_server
from tests import forkserver
from tests.lsp.conftest import SERVER

CLIENTS: list[dict[str, Any]] = [
    {},
    {"general": {"positionEncodings": ["utf-8", "utf-16"]}},
    {"general": {"positionEncodings": ["utf-32"]},
     "workspace": {"workspaceFolders": True, "fileOperations": {"didRename": True}},
     "textDocument": {"codeAction": {"codeActionLiteralSupport": {
         "codeActionKind": {"valueSet": ["quickfix"]}}}},
     "window": {"workDoneProgress": True},
     "experimental": {"openprogram": {"permissions": True, "questions": True}}},
]


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _frames(data: bytes) -> list[dict[str, Any]]:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(next(line for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")).split(b":")[1])
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


def _initialize(capabilities: dict[str, Any], msg_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": capabilities,
                       "initializationOptions": {"questionTimeout": 30}}}


class _Capture:
    def __init__(self) -> None:
        self.data: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.data.append(data)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("client", CLIENTS)
async def test_the_early_answer_is_the_servers_own(tmp_path: Path, client: dict[str, Any],
                                                   caplog: pytest.LogCaptureFixture) -> None:
    early = _frames(initialize_answer(_initialize(client, "i-1")) or b"")
    assert [m["id"] for m in early] == ["i-1"] and "capabilities" in early[0]["result"]
    (tmp_path / "ws").mkdir()
    server = build_server(build_dispatcher(AppConfig(workspace=tmp_path / "ws",
                                                     home=tmp_path / "home")))
    own = _Capture()
    server.protocol.set_writer(own)
    server.protocol.handle_message(server.protocol.structure_message(_initialize(client, "i-1")))
    assert _frames(b"".join(own.data)) == early  # what the server itself answers
    # answered early: the server handles it all the same and sends nothing for it
    again = build_server(build_dispatcher(AppConfig(workspace=tmp_path / "ws",
                                                    home=tmp_path / "home2")))
    sent = _Capture()
    again.protocol.set_writer(sent)
    again.protocol.answered_early = ("i-1", early[0]["result"])
    with caplog.at_level(logging.ERROR, logger="openprogram_lsp"):
        again.protocol.handle_message(again.protocol.structure_message(
            _initialize(client, "i-1")))
    assert sent.data == [] and again.initialized and again.protocol.answered_early is None
    assert "answered early" not in caplog.text
    await again.host.stop()
    await server.host.stop()
    await asyncio.sleep(0)


async def test_an_early_answer_unlike_the_servers_is_an_error_in_the_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "ws").mkdir()
    server = build_server(build_dispatcher(AppConfig(workspace=tmp_path / "ws",
                                                     home=tmp_path / "home")))
    sent = _Capture()
    server.protocol.set_writer(sent)
    server.protocol.answered_early = (7, {"capabilities": {}})
    with caplog.at_level(logging.ERROR, logger="openprogram_lsp"):
        server.protocol.handle_message(server.protocol.structure_message(_initialize({}, 7)))
    assert sent.data == []
    assert "initialize 7 was answered early with" in caplog.text
    await server.host.stop()


def test_the_declared_capabilities_are_checked_against_the_registry() -> None:
    features = {name: object() for name in capabilities.FEATURES}
    options = {k: v for k, v in capabilities.FEATURES.items() if v is not None}
    commands = list(capabilities.COMMANDS)
    capabilities.check({**features, "openprogram/chat": object()}, options, commands)
    for bad in ({**features, "textDocument/definition": object()}, options, commands), \
            (features, {**options, "textDocument/hover": {"workDoneProgress": True}}, commands), \
            (features, options, [*commands, "openprogram.server.more"]):
        with pytest.raises(RuntimeError, match=r"lsp/capabilities\.py"):
            capabilities.check(*bad)


def _serve(tmp_path: Path, data: bytes, **env: str) -> subprocess.CompletedProcess[bytes]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    full.update({"OPENPROGRAM_HOME": str(tmp_path / "home"), "OPENPROGRAM_MODEL": "offline",
                 "XDG_CONFIG_HOME": str(tmp_path / "xdg"), **env})
    forked = forkserver.launcher()  # the fork client: the server on these very pipes
    command = [forked, "serve"] if forked else [*SERVER]
    return subprocess.run(command, input=data, capture_output=True, env=full, cwd=tmp_path,
                          timeout=120, check=False)


def test_initialize_is_answered_once_and_the_rest_goes_on(tmp_path: Path) -> None:
    """Everything written at once: the frames after ``initialize`` that were read with it
    reach the server, in order."""
    proc = _serve(tmp_path, _frame(_initialize(CLIENTS[2]))
                  + _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                  + _frame({"jsonrpc": "2.0", "id": 2, "method": "openprogram/sessions",
                            "params": {}})
                  + _frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
                  + _frame({"jsonrpc": "2.0", "method": "exit"}))
    assert proc.returncode == 0, proc.stderr
    frames = _frames(proc.stdout)
    answers = [m for m in frames if "id" in m]
    assert [m["id"] for m in answers] == [1, 2, 3]
    assert answers[0]["result"]["capabilities"]["positionEncoding"] == "utf-32"
    assert answers[1]["result"]["sessions"] == [] and answers[2]["result"] is None
    logged = [m["params"]["message"] for m in frames if m.get("method") == "window/logMessage"]
    assert any("ready" in line for line in logged)
    assert not any("answered early" in line for line in [*logged, proc.stderr.decode()])


def test_an_exit_without_a_shutdown_ends_with_1(tmp_path: Path) -> None:
    proc = _serve(tmp_path, _frame(_initialize(CLIENTS[2]))
                  + _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                  + _frame({"jsonrpc": "2.0", "method": "exit"}))
    assert proc.returncode == 1, proc.stderr


def test_a_first_message_that_is_not_initialize_is_the_servers_to_answer(
        tmp_path: Path) -> None:
    proc = _serve(tmp_path, _frame({"jsonrpc": "2.0", "id": 1, "method": "openprogram/sessions",
                                    "params": {}})
                  + _frame(_initialize({}, 2))
                  + _frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
                  + _frame({"jsonrpc": "2.0", "method": "exit"}))
    answers = [m for m in _frames(proc.stdout) if "id" in m]
    assert answers[0]["id"] == 1 and answers[0]["error"]["code"] == -32002
    assert answers[1]["id"] == 2 and "capabilities" in answers[1]["result"]
    assert answers[2] == {"jsonrpc": "2.0", "id": 3, "result": None}


@pytest.mark.parametrize("cause", ["state root", "setting"])
def test_a_server_that_cannot_start_shows_why_and_answers_every_request_with_it(
        tmp_path: Path, cause: str) -> None:
    """``initialize`` is answered before the settings are read and the state root opened;
    the editor is then shown why nothing works, and every request gets the reason."""
    if cause == "state root":
        blocker = tmp_path / "a-file"
        blocker.write_text("not a directory\n")  # root can write anywhere: use a file
        env, expected = {"OPENPROGRAM_HOME": str(blocker / "home")}, str(blocker)
    else:
        env = {"OPENPROGRAM_MCP_TOOL_TIMEOUT": "-1"}
        expected = "OPENPROGRAM_MCP_TOOL_TIMEOUT='-1': must be greater than 0"
    proc = _serve(tmp_path, _frame(_initialize({}))
                  + _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                  + _frame({"jsonrpc": "2.0", "id": 2, "method": "openprogram/sessions",
                            "params": {}})
                  + _frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
                  + _frame({"jsonrpc": "2.0", "method": "exit"}), **env)
    initialized, shown, sessions, shutdown = _frames(proc.stdout)
    assert initialized["id"] == 1 and "capabilities" in initialized["result"]
    assert shown["method"] == "window/showMessage" and shown["params"]["type"] == 1
    assert sessions["id"] == 2 and sessions["error"]["code"] == -32005, sessions
    for reason in (shown["params"]["message"], sessions["error"]["message"]):
        assert reason.startswith("openprogram-lsp cannot start: ") and expected in reason
    assert shutdown == {"jsonrpc": "2.0", "id": 3, "result": None}
    assert b"Traceback" not in proc.stderr
