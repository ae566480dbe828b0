"""Caps on tool output (bytes and lines), so no tool floods the model or the store."""

from __future__ import annotations

MAX_TOOL_BYTES = 300_000  # above any one tool's own cap (read_file: a 100 KiB page)
MAX_TOOL_LINES = 10_000


def cap_text(text: str, *, max_bytes: int = MAX_TOOL_BYTES,
             max_lines: int = MAX_TOOL_LINES) -> str:
    """``text`` if within the caps, else its head and tail around a "truncated" note."""
    data = text.encode("utf-8", "replace")
    lines = text.count("\n") + 1
    if len(data) <= max_bytes and lines <= max_lines:
        return text
    head_b, tail_b = data[:max_bytes // 2], data[-(max_bytes // 2):]
    head = head_b.decode("utf-8", "ignore").split("\n")[:max_lines // 2]
    tail = tail_b.decode("utf-8", "ignore").split("\n")[-(max_lines // 2):]
    kept = "\n".join(head) + "\n".join(tail)
    cut_b = len(data) - len(kept.encode("utf-8"))
    cut_l = lines - len(head) - len(tail)
    note = f"[... truncated: {max(cut_b, 0)} bytes, {max(cut_l, 0)} lines cut ...]"
    return "\n".join(head) + f"\n{note}\n" + "\n".join(tail)


class HeadTail:
    """Keeps the first and last ``limit // 2`` bytes of a stream, counting what it drops."""

    def __init__(self, limit: int) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Take one chunk of output."""
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[:len(self.tail) - self.half]

    def text(self, *, max_lines: int) -> str:
        """The kept output as text, with a note saying how much was cut."""
        kept = len(self.head) + len(self.tail)
        if self.total <= kept:
            return cap_text(bytes(self.head + self.tail).decode("utf-8", "replace"),
                            max_bytes=2 * self.half, max_lines=max_lines)
        head = bytes(self.head).decode("utf-8", "replace")
        tail = bytes(self.tail).decode("utf-8", "replace")
        return cap_text(head + f"\n[... truncated: {self.total - kept} bytes of output cut ...]\n"
                        + tail, max_bytes=2 * self.half + 200, max_lines=max_lines)
