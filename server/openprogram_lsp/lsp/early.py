"""``initialize`` answered before the server is built (a fast start, issue 33).

An editor sends nothing but ``initialize`` until it has the answer, and most of a start is
importing and building what later requests use (the dispatcher, stores, tools, the wire
models). Over stdio ``answer_initialize`` reads the first frame with only pygls and
lsprotocol imported; when it is a well-formed ``initialize`` request, a plain pygls server
holding the declared features (``lsp.capabilities``, which ``build_server`` checks against its
own registry) answers it on the same pygls code path the server's own answer takes. The server
is built after that and handles that ``initialize`` first, so its own handler runs as before
(folders, settings, options), without sending its answer a second time
(``OpenProgramProtocol.answered_early``); then it reads the bytes read here after that frame.
The first frame is read under the default frame limit (``max_frame_bytes`` is a setting, read
after the answer); every later frame under the configured one.

Anything else first (another message, a frame the strict reader would refuse, a stall inside
the frame, the end of input) is answered by nobody here: the bytes go to the server as read.
"""

from __future__ import annotations

import json
import logging
import os
import select
from dataclasses import dataclass
from typing import IO, Any

from openprogram_lsp.lsp.fd_writer import FdWriter
from openprogram_lsp.lsp.framing import DEFAULT_MAX_FRAME, MAX_HEADER_LINE, MAX_HEADERS

log = logging.getLogger(__name__)
STALL = 0.75  # seconds without a byte inside the first frame: the server's reader decides


@dataclass(frozen=True)
class EarlyStart:
    """What was read before the server existed, and the ``initialize`` answered from it."""

    read: bytes = b""
    """The bytes read from stdin that the server reads first: all of them, or those after the
    ``initialize`` frame answered here."""
    message: dict[str, Any] | None = None
    """The ``initialize`` request answered here (the server handles it first), else None."""
    result: Any = None
    """The result sent (JSON), which the server's own must equal."""


def _length(header: bytes) -> int | None:
    """The Content-Length of a header block in the canonical form, else None."""
    lines = header.split(b"\r\n")
    if len(lines) > MAX_HEADERS:
        return None
    length = None
    for line in lines:
        name, sep, value = line.partition(b":")
        if not sep or len(line) > MAX_HEADER_LINE or name != name.strip():
            return None
        if name.lower() == b"content-length":
            digits = value.strip()
            if length is not None or not digits.isdigit() or len(digits) > 18:
                return None
            length = int(digits)
    return length if length is not None and length <= DEFAULT_MAX_FRAME else None


def read_first_frame(fd: int) -> tuple[bytes, int | None]:
    """Read stdin until the first frame is whole; the bytes read and where the frame ends
    (None: no whole canonical frame, and the server's reader takes it from here)."""
    buf = bytearray()
    end: int | None = None
    while True:
        if end is None:
            head = buf.find(b"\r\n\r\n")
            if head >= 0:
                length = _length(bytes(buf[:head]))
                if length is None:
                    return bytes(buf), None
                end = head + 4 + length
            elif len(buf) > MAX_HEADER_LINE * MAX_HEADERS:
                return bytes(buf), None
        if end is not None and len(buf) >= end:
            return bytes(buf), end
        if buf:  # once a frame began, a stall is the server reader's to report
            ready, _, _ = select.select([fd], [], [], STALL)
            if not ready:
                return bytes(buf), None
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            return bytes(buf), None
        buf += chunk


def initialize_answer(message: dict[str, Any]) -> bytes | None:
    """The framed answer a server with the declared features gives this ``initialize``
    request, or None when it would not be a result (the server then answers it itself)."""
    from pygls.exceptions import JsonRpcException
    from pygls.lsp.server import LanguageServer

    from openprogram_lsp import __version__
    from openprogram_lsp.lsp.capabilities import COMMANDS, FEATURES, SYNC_KIND

    # pygls' own protocol: ours differs only for openprogram/* methods and dict results
    # (importing it would load the wire models)
    server = LanguageServer("openprogram-lsp", __version__, text_document_sync_kind=SYNC_KIND)
    for name, options in FEATURES.items():
        server.feature(name, options)(_nothing)
    for command in COMMANDS:
        server.command(command)(_nothing)
    written: list[bytes] = []
    server.protocol.set_writer(_Capture(written))
    try:
        server.protocol.handle_message(server.protocol.structure_message(message))
    except JsonRpcException:  # params that do not structure: the server says so
        return None
    if len(written) != 1:
        return None
    return written[0]


def _nothing(*args: Any) -> None:
    """The declared handlers' stand-in (this server only answers ``initialize``)."""


class _Capture:
    """A pygls writer keeping what it is given."""

    def __init__(self, into: list[bytes]) -> None:
        self.into = into

    def write(self, data: bytes) -> None:
        self.into.append(data)

    def close(self) -> None:
        """Nothing to close."""


def answer_initialize(stdin: IO[bytes], stdout: IO[bytes]) -> EarlyStart:
    """Read the first frame; answer it on ``stdout`` when it is ``initialize`` (see above)."""
    read, end = read_first_frame(stdin.fileno())
    if end is None:
        return EarlyStart(read)
    from openprogram_lsp.lsp.framing import FrameError, parse_message

    try:
        message = parse_message(read[read.index(b"\r\n\r\n") + 4:end])
    except FrameError:
        return EarlyStart(read)
    if message.get("method") != "initialize" or "id" not in message \
            or not isinstance(message.get("params"), dict):
        return EarlyStart(read)
    try:
        framed = initialize_answer(message)
    except Exception:  # the server's own handling says what is wrong
        log.debug("initialize not answered early", exc_info=True)
        return EarlyStart(read)
    if framed is None:
        return EarlyStart(read)
    response = json.loads(framed[framed.index(b"\r\n\r\n") + 4:])
    if "result" not in response:
        return EarlyStart(read)
    FdWriter(stdout).write(framed)
    return EarlyStart(read[end:], message, response["result"])
