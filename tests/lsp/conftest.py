"""Real-transport fixtures: the server as a subprocess over stdio, driven by a pytest-lsp client."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.io_ import run_async
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import forward_stderr, register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from openprogram_lsp.lsp.protocol import RawNotification, RawRequest, RawResponse
from tests import forkserver

SERVER = [sys.executable, "-m", "openprogram_lsp", "serve"]
RAW_RESULTS = frozenset({"textDocument/codeAction"})
"""Standard methods whose results the test client keeps as plain JSON (``Command | CodeAction``
unions do not structure reliably)."""


class RawClientProtocol(LanguageClientProtocol):
    """The test client keeps ``openprogram/*`` payloads as plain JSON."""

    def get_message_type(self, method: str) -> Any:
        if method.startswith("openprogram/"):
            return RawNotification if method == "openprogram/event" else RawRequest
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> Any:
        if method.startswith("openprogram/") or method in RAW_RESULTS:
            return RawResponse
        return super().get_result_type(method)


class OpClient(LanguageClient):
    """A test client recording every ``openprogram/event``."""

    def __init__(self) -> None:
        super().__init__(protocol_cls=RawClientProtocol, converter_factory=default_converter)
        self.events: list[dict[str, Any]] = []
        self.permission_requests: list[dict[str, Any]] = []
        self.question_requests: list[dict[str, Any]] = []
        self.message_requests: list[types.ShowMessageRequestParams] = []

        @self.feature("openprogram/event")
        def _on_event(params: Any) -> None:
            self.events.append(params)

    async def start_io(self, cmd: str, *args: str, **kwargs: Any) -> None:
        """Start the server, forked from the worker's fork server (tests/forkserver.py)."""
        forked = forkserver.forkable([cmd, *args])
        if forked is None:
            await super().start_io(cmd, *args, **kwargs)
            return
        server = await forkserver.start_async(forked, env=kwargs.get("env"),
                                              cwd=kwargs.get("cwd"))
        self.protocol.set_writer(server.stdin)  # what pygls' start_io does with a process
        self._async_tasks.append(asyncio.create_task(run_async(
            stop_event=self._stop_event, reader=server.stdout, protocol=self.protocol,
            logger=logging.getLogger("pygls.client"),
            error_handler=self.report_server_error)))
        self._server = server  # type: ignore[assignment]
        self._async_tasks.append(asyncio.create_task(self._server_exit()))
        self._stderr_forwarder = asyncio.create_task(
            forward_stderr(server))  # type: ignore[arg-type]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """Events of one type received so far."""
        return [e for e in self.events if e["type"] == kind]

    async def call(self, method: str, params: Any = None) -> Any:
        """Send a custom request and return its (plain JSON) result."""
        return await self.protocol.send_request_async(method, params)

    def call_with_id(self, method: str, params: Any, msg_id: str) -> asyncio.Future[Any]:
        """Send a request with a known id (so that it can be cancelled)."""
        return asyncio.wrap_future(self.protocol.send_request(method, params, msg_id=msg_id))

    def cancel_request(self, msg_id: str) -> None:
        """Send ``$/cancelRequest``."""
        self.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    async def wait_event(self, kind: str, pred: Callable[[dict[str, Any]], bool] | None = None,
                         *, timeout: float = 20.0) -> dict[str, Any]:
        """The first event of a type (matching pred), waiting for it if needed."""
        for _ in range(int(timeout / 0.01)):
            for event in self.of_type(kind):
                if pred is None or pred(event):
                    return event
            await asyncio.sleep(0.01)
        raise AssertionError(f"no {kind} event; got {[e['type'] for e in self.events]}")


def capabilities(*, experimental: bool = True, progress: bool = False,
                 apply_edit: bool = False, diagnostics: bool = False,
                 navigation: bool = False) -> types.ClientCapabilities:
    """Client capabilities with or without ``experimental.openprogram`` (``diagnostics``,
    ``navigation``: it answers ``openprogram/diagnostics``, ``openprogram/navigate`` too)."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(apply_edit=True) if apply_edit else None,
        window=types.WindowClientCapabilities(
            work_done_progress=progress,
            show_message=types.ShowMessageRequestClientCapabilities(
                message_action_item=types.ClientShowMessageActionItemOptions(
                    additional_properties_support=False))),
        experimental={"openprogram": {"permissions": True, "questions": True,
                                      **({"diagnostics": True} if diagnostics else {}),
                                      **({"navigation": True} if navigation else {})}}
        if experimental else None,
    )


def write_script(path: Path, responses: list[dict[str, Any]]) -> str:
    """Write a scripted-model file and return its model spec."""
    path.write_text(json.dumps(responses), "utf-8")
    return f"scripted:{path}"


Starter = Callable[..., Awaitable[OpClient]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest_asyncio.fixture
async def start(tmp_path: Path, workspace: Path) -> AsyncIterator[Starter]:
    """Start servers (several per test if needed); all are shut down at the end."""
    clients: list[OpClient] = []

    async def _start(*, model: str | None = None, experimental: bool = True,
                     progress: bool = False, init_options: dict[str, Any] | None = None,
                     apply_edit: bool = False, extra_env: dict[str, str] | None = None,
                     args: list[str] | None = None,
                     setup: Callable[[OpClient], None] | None = None,
                     home: Path | None = None, wrap: list[str] | None = None,
                     diagnostics: bool = False, navigation: bool = False) -> OpClient:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
        env["OPENPROGRAM_HOME"] = str(home or tmp_path / "home")
        if model:
            env["OPENPROGRAM_MODEL"] = model
        env.update(extra_env or {})
        log_args = ["--log-file", str(tmp_path / f"server{len(clients)}.log")]
        # ``wrap``: a command the server runs under (e.g. bwrap; a real exec, not a fork)
        config = ClientServerConfig(server_command=[*(wrap or []), *SERVER, *log_args,
                                                    *(args or [])],
                                    server_env=env, client_factory=_factory)
        client: OpClient = await config.start()  # type: ignore[assignment]
        clients.append(client)
        if setup is not None:
            setup(client)
        await client.initialize_session(types.InitializeParams(
            capabilities=capabilities(experimental=experimental, progress=progress,
                                      apply_edit=apply_edit, diagnostics=diagnostics,
                                      navigation=navigation),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=init_options))
        return client

    yield _start
    problems = [problem for client in clients if (problem := await close_client(client))]
    assert not problems, "; ".join(problems)


TEARDOWN_TIMEOUT = 30.0
"""Seconds a server gets to answer shutdown and to exit (10x an idle machine's need)."""


async def close_client(client: OpClient, timeout: float = TEARDOWN_TIMEOUT) -> str:
    """Shut a server down within ``timeout`` (else kill it); what went wrong, or ""."""
    if client.stopped:
        return ""
    proc = client._server
    if client.capabilities is None:  # never initialised (its setup failed): nothing to shut down
        if proc is not None and proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(client.stop(), timeout)
        return ""
    problem = ""
    try:
        await asyncio.wait_for(client.shutdown_session(), timeout)
    except Exception as exc:  # a dead or stuck server: still make sure it goes away
        problem = f"shutdown failed: {type(exc).__name__}: {exc}"
    try:
        await asyncio.wait_for(client.stop(), timeout)
    except TimeoutError:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await asyncio.wait_for(proc.wait(), timeout)
        problem = problem or f"the server did not exit within {timeout:.0f} s; killed"
    return problem


def _factory() -> OpClient:
    client = OpClient()
    register_lsp_features(client)
    return client
