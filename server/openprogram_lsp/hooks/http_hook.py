"""Running an ``http`` hook: the event's JSON POSTed to a URL, the answer read as a command's.

As in Claude Code: a 2xx answer is a success whose body is read as a command hook's stdout
(empty, text or a JSON decision); any other status, a refused connection or a timeout is a
non-blocking error (a ``critical`` hook then refuses). Header values may name environment
variables (``$NAME``, ``${NAME}``), but only those the hook lists in ``allowedEnvVars``; any
other becomes empty, so a workspace's hook cannot carry the server's secrets off. Redirects are
not followed.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from openprogram_lsp.hooks.config import HookSpec
from openprogram_lsp.hooks.runner import MAX_CAPTURE, HookRun

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def header_value(value: str, allowed: tuple[str, ...]) -> str:
    """``value`` with ``$NAME`` / ``${NAME}`` replaced: an allowed variable's value, else ""."""
    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return os.environ.get(name, "") if name in allowed else ""
    return _VAR.sub(sub, value).replace("\r", "").replace("\n", "")


def _loopback(url: str) -> bool:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_http(hook: HookSpec, payload: dict[str, Any], *,
             cancelled: Callable[[], bool] | None = None) -> HookRun:
    """POST the payload; the run as a command's would be (blocking; call off-loop)."""
    import httpx  # on first use: a run with no HTTP hook never loads it (~0.1 s; issue 33)

    start = time.monotonic()
    headers = {k: header_value(v, hook.allowed_env) for k, v in hook.headers}
    headers["Content-Type"] = "application/json"
    body = json.dumps(payload, default=str).encode()

    def failed(error: str, *, timed_out: bool = False) -> HookRun:
        return HookRun(hook, None, "", "", time.monotonic() - start, timed_out=timed_out,
                       error=error)

    try:
        # a proxy from the environment is for the world; a loopback service is reached directly
        with httpx.Client(timeout=hook.timeout, follow_redirects=False,
                          trust_env=not _loopback(hook.command)) as client, \
                client.stream("POST", hook.command, content=body, headers=headers) as reply:
            chunks: list[bytes] = []
            size = 0
            for chunk in reply.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_CAPTURE * 4 or time.monotonic() - start > hook.timeout:
                    break
                if cancelled is not None and cancelled():
                    return HookRun(hook, None, "", "", time.monotonic() - start,
                                   cancelled=True)
            text = b"".join(chunks)[:MAX_CAPTURE * 4].decode("utf-8", "replace")[:MAX_CAPTURE]
            status = reply.status_code
    except httpx.TimeoutException:
        return failed(f"got no answer from {hook.command} in {hook.timeout:g}s",
                      timed_out=True)
    except httpx.HTTPError as exc:
        return failed(f"could not reach {hook.command}: {type(exc).__name__}: {exc}")
    except (ValueError, UnicodeError, httpx.InvalidURL) as exc:  # a URL or header unsendable
        return failed(f"could not be sent: {type(exc).__name__}: {exc}")
    if not 200 <= status < 300:
        return HookRun(hook, None, "", text, time.monotonic() - start,
                       error=f"answered HTTP {status}")
    return HookRun(hook, 0, text, "", time.monotonic() - start)
