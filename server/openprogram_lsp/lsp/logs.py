"""Logging: project records to ``window/logMessage`` (from any thread) and to ``--log-file``."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types

_LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}


class WindowLogHandler(logging.Handler):
    """Sends ``openprogram_lsp`` records to the client; buffers them until it is attached."""

    def __init__(self, level: int = logging.INFO) -> None:
        super().__init__(level)
        self._server: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._buffer: list[logging.LogRecord] = []
        self.addFilter(lambda r: r.name.startswith("openprogram_lsp"))

    def attach(self, server: Any, loop: asyncio.AbstractEventLoop) -> None:
        """Start sending to a connected client (and flush what was buffered)."""
        self._server, self._loop, self._thread = server, loop, threading.get_ident()
        buffered, self._buffer = self._buffer[-50:], []
        for record in buffered:
            self._send(record)

    def emit(self, record: logging.LogRecord) -> None:
        """Queue or send one record."""
        if self._server is None or self._loop is None:
            self._buffer.append(record)
            return
        if threading.get_ident() == self._thread:
            self._send(record)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._send, record)

    def _send(self, record: logging.LogRecord) -> None:
        try:
            kind = _LEVELS.get(record.levelno, types.MessageType.Log)
            self._server.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:
            self.handleError(record)


def configure_logging(log_file: Path | None) -> WindowLogHandler:
    """Route project logs to the client and, if given, everything to a file."""
    root = logging.getLogger()
    project = logging.getLogger("openprogram_lsp")
    project.setLevel(logging.DEBUG if log_file else logging.INFO)
    handler = WindowLogHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    project.addHandler(handler)
    for existing in root.handlers:
        if existing.level == logging.NOTSET:
            existing.setLevel(logging.WARNING)
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(log_file, encoding="utf-8")
        fh.setFormatter(logging.Formatter(
            "%(asctime)s %(levelname)s %(name)s [%(threadName)s]: %(message)s"))
        root.addHandler(fh)
        root.setLevel(logging.DEBUG)
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_expected_errors)
    return handler


def _expected_errors(record: logging.LogRecord) -> bool:
    """Drop pygls tracebacks for errors answered on purpose (bad params, unknown ids)."""
    exc = record.exc_info[1] if record.exc_info else None
    code = getattr(exc, "code", None)
    return not (isinstance(code, int) and code != -32603)
