"""The stdio server's writer: every byte of a message on stdout, in order, before it returns.

pygls' ``StdoutWriter`` calls ``stdout.write`` once and does not look at what it returns. With
``PYTHONUNBUFFERED`` set (``-u``, common in containers and CI) ``sys.stdout.buffer`` is a raw
``FileIO``, whose ``write`` is one ``write(2)``: on a pipe it may take only part of a large
message (a blocking write is cut short when the process is interrupted once some bytes went;
seen as 131,072 of a 203,942-byte history page under load), and the rest was dropped, so the
client waited forever inside a frame. A descriptor shared with stdin (one socket given as
both, as inetd-style launchers do) is made non-blocking when stdin is read through the event
loop; then a buffered ``write`` raises ``BlockingIOError`` halfway through a message, and a raw
one returns None. ``FdWriter`` writes to the descriptor itself, on from where a short write
stopped, and waits for room when it is full, on the loop's thread like the blocking write it
replaces (docs/decisions/framing.md).
"""

from __future__ import annotations

from typing import IO

from openprogram_lsp.core.fsutil import write_all


class FdWriter:
    """A pygls writer on a binary stream's descriptor (whatever its buffering or mode)."""

    def __init__(self, stream: IO[bytes]) -> None:
        stream.flush()  # anything written through the stream goes out first
        self.stream = stream
        self.fd = stream.fileno()

    def write(self, data: bytes) -> None:
        """One framed message, whole."""
        write_all(self.fd, data)

    def close(self) -> None:
        """Close the stream (as pygls' writer does)."""
        self.stream.close()
