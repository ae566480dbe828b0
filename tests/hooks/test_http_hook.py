"""http hooks against a loopback server: the body, the headers, and how an answer is read."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from openprogram_lsp.hooks import decisions
from openprogram_lsp.hooks.config import HookSpec
from openprogram_lsp.hooks.http_hook import header_value, run_http


class _Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.path, dict(self.headers), body))
        status, answer = {"/deny": (200, json.dumps({"decision": "block", "reason": "nope"})),
                          "/text": (200, "remember the tests"), "/empty": (200, ""),
                          "/moved": (302, ""), "/broken": (500, "boom")}[self.path]
        self.send_response(status)
        if status == 302:
            self.send_header("Location", "/deny")
        self.send_header("Content-Length", str(len(answer.encode())))
        self.end_headers()
        self.wfile.write(answer.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def spec(url: str, **kw: Any) -> HookSpec:
    return HookSpec("PreToolUse", url, type="http", **kw)


def test_the_event_is_posted_as_json_with_only_allowed_variables_in_headers(
        base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN", "t1")
    monkeypatch.setenv("SECRET", "s1")
    _Handler.seen = []
    run = run_http(spec(f"{base}/empty", headers=(("Auth", "Bearer ${TOKEN}"),
                                                   ("X-Leak", "$SECRET-$TOKEN")),
                        allowed_env=("TOKEN",)), {"tool_name": "Bash"})
    assert run.exit_code == 0 and run.stdout == "" and not run.failed
    [(_, headers, body)] = _Handler.seen
    assert headers["Auth"] == "Bearer t1" and headers["X-Leak"] == "-t1"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"tool_name": "Bash"}


def test_a_2xx_body_is_read_as_a_commands_stdout(base: str) -> None:
    denied = decisions.pre_tool(run_http(spec(f"{base}/deny"), {}))
    assert (denied.verdict, denied.reason) == ("deny", "nope")
    prompt = decisions.prompt(run_http(spec(f"{base}/text"), {}))
    assert prompt.context == "remember the tests" and prompt.blocked is None


def test_another_status_a_redirect_or_no_server_is_a_non_blocking_error(base: str) -> None:
    broken = run_http(spec(f"{base}/broken"), {})
    assert broken.failed and broken.error == "answered HTTP 500"
    assert decisions.pre_tool(broken).verdict is None  # fails open
    assert run_http(spec(f"{base}/moved"), {}).error == "answered HTTP 302"  # not followed
    gone = run_http(spec("http://127.0.0.1:9/x", timeout=2), {})
    assert gone.failed and "could not reach" in (gone.error or "")
    critical = decisions.pre_tool(run_http(spec(f"{base}/broken", critical=True), {}))
    assert critical.verdict == "deny" and "answered HTTP 500" in critical.reason


def test_header_values_lose_line_breaks_and_what_cannot_be_sent_fails_open() -> None:
    assert header_value("a\r\nX-Injected: 1 $V", ("V",)) == "aX-Injected: 1 "
    for bad in (spec("http://127.0.0.1:9/x", headers=(("X", "caf\u00e9"),)),
                spec("http://[::1/x")):
        run = run_http(bad, {})
        assert run.failed and "could not" in (run.error or "")
