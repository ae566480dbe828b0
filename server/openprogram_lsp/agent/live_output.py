"""A running command's output as ``tool.output`` events: batched, bounded, in order."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from openprogram_lsp.core.secrets import partial_tail, redact

FLUSH_DELAY = 0.05  # seconds: a burst of small writes becomes one event
FLUSH_BYTES = 8192  # or sooner, once this much is waiting
LIVE_LIMIT = 64 * 1024  # what one call streams live; the full (capped) output comes at the end


class LiveOutput:
    """Feeds text pieces of one tool call; emits them as ``tool.output`` ``{toolCallId, text}``.

    At most ``LIVE_LIMIT`` characters are streamed per call: past it one note says so, and the
    card gets the whole (capped) output with ``tool.finished`` as always. A configured key is
    redacted (``core.secrets.redact``); so that one split across two pieces is caught, a flush
    that ends with the start of one holds those characters back for the next (or the end).
    """

    def __init__(self, emit: Callable[[str, dict[str, Any]], None], tool_call_id: str) -> None:
        self.emit = emit
        self.tool_call_id = tool_call_id
        self.pending: list[str] = []
        self.size = 0
        self.sent = 0
        self.cut = False
        self.noted = False
        self.timer: asyncio.TimerHandle | None = None
        self.held = ""  # the end of what was flushed, kept back until more comes

    def feed(self, text: str) -> None:
        """Take the next piece of output (called on the event loop)."""
        if not text or self.cut:
            return
        room = LIVE_LIMIT - self.sent - self.size
        if len(text) > room:
            text = text[:max(room, 0)]
            self.cut = True
        self.pending.append(text)
        self.size += len(text)
        if self.cut or self.size >= FLUSH_BYTES:
            self.flush()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(FLUSH_DELAY, self.flush)

    def flush(self, *, final: bool = False) -> None:
        """Emit what is waiting (and the note once the limit was reached)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        text = redact(self.held + "".join(self.pending))
        keep = 0 if final or self.cut else partial_tail(text)
        at = max(len(text) - keep, 0)
        self.held, text = text[at:], text[:at]
        self.pending.clear()
        self.sent += self.size
        self.size = 0
        if self.cut and not self.noted:
            self.noted = True
            text += "\n[live output stops here; the full output comes when the command ends]\n"
        if text:
            self.emit("tool.output", {"tool_call_id": self.tool_call_id, "text": text})

    def close(self) -> None:
        """Flush the rest; called before ``tool.finished``."""
        self.flush(final=True)
