"""Reasoning a server leaves in the reply text: ``<think>…</think>`` at the start of the
content (llama.cpp with ``--reasoning-format none``, older vLLM and Ollama builds, some
gateways), split from the reply as it streams, however the chunks cut the tags."""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"


def _held(text: str, tag: str) -> int:
    """How many characters at the end of ``text`` could begin ``tag`` (kept for the next
    chunk)."""
    for n in range(min(len(text), len(tag) - 1), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


class ThinkTagSplitter:
    """Feeds reply text; returns ``(is_thought, text)`` pieces in order."""

    __slots__ = ("_buf", "_state", "_trim")

    def __init__(self) -> None:
        self._buf = ""
        self._state = "start"  # start: undecided; in: inside the tags; out: reply text
        self._trim = False  # drop the blank lines just after the closing tag

    def feed(self, text: str) -> list[tuple[bool, str]]:
        """The pieces ``text`` completes (some may wait for the next chunk)."""
        out: list[tuple[bool, str]] = []
        self._buf += text
        while self._buf:
            if self._state == "start":
                lead = self._buf.lstrip()
                if len(lead) < len(OPEN) and OPEN.startswith(lead):
                    return out  # "<thi": wait for more
                if lead.startswith(OPEN):
                    self._buf, self._state = lead[len(OPEN):], "in"
                else:
                    self._state = "out"
            elif self._state == "in":
                at = self._buf.find(CLOSE)
                if at >= 0:
                    if at:
                        out.append((True, self._buf[:at]))
                    self._buf, self._state, self._trim = self._buf[at + len(CLOSE):], "out", True
                    continue
                keep = _held(self._buf, CLOSE)
                if len(self._buf) > keep:
                    out.append((True, self._buf[:len(self._buf) - keep]))
                self._buf = self._buf[len(self._buf) - keep:]
                return out
            else:
                if self._trim:
                    self._buf = self._buf.lstrip("\n")
                    if not self._buf:
                        return out
                    self._trim = False
                out.append((False, self._buf))
                self._buf = ""
        return out

    def flush(self) -> list[tuple[bool, str]]:
        """What is left at the end of the response (an unclosed thought stays a thought)."""
        rest, self._buf = self._buf, ""
        if not rest or (self._state == "out" and self._trim and not rest.strip("\n")):
            return []
        return [(self._state == "in", rest)]
