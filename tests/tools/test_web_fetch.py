"""web_fetch against a loopback HTTP server: text, HTML as Markdown, caps, redirects, the
network setting, and the approval per host through a real turn."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from openprogram_lsp.config import load_settings
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.tools.base import ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.descriptions import FETCH_MAX_CHARS
from openprogram_lsp.tools.builtin.web import WebFetch
from tests.conftest import RecordingApprover

PAGE = (b"<!doctype html><html><head><title>Docs</title><script>steal()</script>"
        b"<style>p{color:red}</style></head><body><h1>Install</h1><p>Run <code>pip install"
        b" x</code>, then see <a href=\"/next\">the next page</a>.</p><ul><li>one</li>"
        b"<li>two</li></ul></body></html>")
ROUTES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/page": (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE),
    "/plain": (200, {"Content-Type": "text/plain"}, b"just text\n"),
    "/json": (200, {"Content-Type": "application/json"}, b'{"ok": true}'),
    "/png": (200, {"Content-Type": "image/png"},
             b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x08" + b"\0" * 40),
    "/missing": (404, {"Content-Type": "text/plain"}, b"not here"),
    "/big": (200, {"Content-Type": "text/plain"}, b"y" * (FETCH_MAX_CHARS + 5000)),
    "/hop": (302, {"Location": "/plain"}, b""),
    "/away": (301, {"Location": "http://127.0.0.2:9/elsewhere"}, b""),
    "/loop": (302, {"Location": "/loop"}, b""),
}


SERVER = """
import base64, json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
raw = json.loads(sys.stdin.readline())
routes = {k: (v[0], v[1], base64.b64decode(v[2])) for k, v in raw.items()}

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        status, headers, body = routes.get(self.path, (404, {}, b""))
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(httpd.server_address[1], flush=True)
httpd.serve_forever()
"""


@pytest.fixture
def server() -> Iterator[str]:
    """A loopback HTTP server in a process of its own (a port of this process would be
    refused as the server's own)."""
    routes = {k: (st, h, base64.b64encode(b).decode()) for k, (st, h, b) in ROUTES.items()}
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE,
                            stdin=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        proc.stdin.write(json.dumps(routes) + "\n")
        proc.stdin.close()
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(10)


async def fetch(workspace: Path, url: str, **args: object) -> ToolOutput:
    tool = WebFetch()
    return await tool.run(tool.parse({"url": url, **args}), ToolContext(workspace=workspace))


async def test_html_becomes_markdown_or_text(workspace: Path, server: str) -> None:
    out = await fetch(workspace, f"{server}/page")
    head, body = out.text.split("\n\n", 1)
    assert head == f"{server}/page (200 OK, text/html)"
    assert "# Install" in body and "`pip install x`" in body
    assert f"[the next page]({server}/next)" in body  # links made absolute
    assert "- one\n- two" in body
    assert "steal()" not in body and "color:red" not in body
    text = (await fetch(workspace, f"{server}/page", format="text")).text
    assert "Install" in text and "#" not in text.split("\n\n", 1)[1] and "<p>" not in text
    raw = (await fetch(workspace, f"{server}/page", format="html")).text
    assert "<h1>Install</h1>" in raw


async def test_text_json_binary_and_errors(workspace: Path, server: str) -> None:
    assert (await fetch(workspace, f"{server}/plain")).text.endswith("\n\njust text")
    assert (await fetch(workspace, f"{server}/json")).text.endswith('\n\n{"ok": true}')
    png = await fetch(workspace, f"{server}/png")
    assert "[image/png content, PNG image, 16x8 pixels" in png.text and "not shown" in png.text
    missing = await fetch(workspace, f"{server}/missing")
    assert missing.is_error and "(404 Not Found" in missing.text


async def test_caps_and_redirects(workspace: Path, server: str) -> None:
    big = await fetch(workspace, f"{server}/big")
    assert big.text.endswith(f"[showing the first {FETCH_MAX_CHARS:,} of "
                             f"{FETCH_MAX_CHARS + 5000:,} characters]")
    assert (await fetch(workspace, f"{server}/hop")).text.startswith(
        f"{server}/plain (200 OK")  # same host: followed
    away = await fetch(workspace, f"{server}/away")
    assert away.text == (f"{server}/away redirects (301) to another host: "
                         "http://127.0.0.2:9/elsewhere\nFetch that URL with web_fetch to "
                         "follow it.")
    with pytest.raises(ToolError, match="more than 5 redirects"):
        await fetch(workspace, f"{server}/loop")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "example.com",
                                 "http://user:pw@127.0.0.1/", "http:///nohost"])
async def test_only_http_urls_with_a_host(workspace: Path, url: str) -> None:
    with pytest.raises(ToolError, match="web_fetch"):
        await fetch(workspace, url)


async def test_refused_without_network_and_on_timeout(workspace: Path, server: str) -> None:
    tool = WebFetch()
    ctx = ToolContext(workspace=workspace, settings=load_settings(
        env={"OPENPROGRAM_SANDBOX_NETWORK": "off"}, user_file=False))
    with pytest.raises(ToolError, match="network setting is off"):
        await tool.run(tool.parse({"url": f"{server}/plain"}), ctx)
    silent = subprocess.Popen(  # accepts (the backlog) but never answers
        [sys.executable, "-c", "import socket, time\ns = socket.socket()\n"
         "s.bind(('127.0.0.1', 0))\ns.listen(1)\nprint(s.getsockname()[1], flush=True)\n"
         "time.sleep(60)"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        assert silent.stdout is not None
        port = int(silent.stdout.readline())
        with pytest.raises(ToolError, match=r"did not answer within 0\.3 s"):
            await fetch(workspace, f"http://127.0.0.1:{port}/", timeout=0.3)
    finally:
        silent.kill()
        silent.wait(10)


def test_a_turn_asks_per_host(make_dispatcher: Callable[..., Dispatcher],
                              script: Callable[[list[dict]], str], server: str) -> None:
    approver = RecordingApprover("allow_always")
    call = {"name": "web_fetch", "arguments": {"url": f"{server}/plain"}}
    d = make_dispatcher(script([{"tool_calls": [call]},
                                {"tool_calls": [{"name": "web_fetch", "arguments": {
                                    "url": f"{server}/json"}}]},
                                {"text": "Read both."}]), approver=approver)
    r = d.process_user_turn(TurnRequest(text="read the docs"))
    assert r.status == "done"
    [asked] = approver.requests  # the second fetch, same host: the rule covers it
    assert asked.tool_call.kind == "fetch"
    host = server.removeprefix("http://")
    names = [o.name for o in asked.options]
    assert f"Always allow fetches from {host} in this session" in names
    assert f"Always reject fetches from {host}" in names
    calls = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls or []
    assert [c.status for c in calls] == ["completed", "completed"]
    assert (calls[1].output or "").endswith('{"ok": true}')


def test_plan_mode_asks_and_a_rejection_fetches_nothing(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[[list[dict]], str],
        server: str) -> None:
    approver = RecordingApprover("reject_once")
    d = make_dispatcher(script([{"tool_calls": [{"name": "web_fetch", "arguments": {
        "url": f"{server}/plain"}}]}, {"text": "ok"}]), approver=approver,
        permission_mode="plan")
    r = d.process_user_turn(TurnRequest(text="look"))
    assert len(approver.requests) == 1
    call = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls[0]
    assert call.status == "failed" and "rejected" in (call.output or "")


async def test_our_own_listening_ports_are_never_fetched(workspace: Path) -> None:
    ours = socket.socket()  # this process listening: as the server's --tcp port would
    ours.bind(("127.0.0.1", 0))
    ours.listen(1)
    try:
        port = ours.getsockname()[1]
        for host in ("127.0.0.1", "localhost", "127.1.2.3"):
            with pytest.raises(ToolError, match="this server's own port"):
                await fetch(workspace, f"http://{host}:{port}/")
    finally:
        ours.close()
