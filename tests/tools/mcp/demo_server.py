"""A real MCP server for the tests, on the SDK's MCPServer (2.x's FastMCP).

``python demo_server.py`` serves stdio; ``--http`` serves streamable HTTP on a loopback port it
prints as ``PORT <n>``; ``--garbage`` writes lines that are no JSON-RPC message before each answer;
``--no-start`` never answers the handshake. ``DEMO_DIR`` is where notes live.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ResourceLink, ToolAnnotations

NOTES = Path(os.environ.get("DEMO_DIR", "."))
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

app = MCPServer("demo", instructions="Notes for the openprogram-lsp tests.",
                log_level="WARNING")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_note(name: str) -> str:
    """Read a note."""
    return (NOTES / name).read_text("utf-8")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@app.tool(annotations=ToolAnnotations(destructiveHint=True))
def delete_note(name: str) -> str:
    """Delete a note."""
    (NOTES / name).unlink()
    return f"deleted {name}"


@app.tool(annotations=ToolAnnotations(destructiveHint=False))
def add_note(name: str, text: str) -> str:
    """Add a note."""
    (NOTES / name).write_text(text, "utf-8")
    return f"added {name}"


@app.tool()
def count(n: int) -> str:
    """Count up to n (no annotations)."""
    return " ".join(str(i) for i in range(1, n + 1))


@app.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


@app.tool()
def crash() -> str:
    """Exit the whole server in the middle of the call."""
    print("crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@app.tool()
def fail() -> str:
    """Raise an error (the result has isError)."""
    raise ToolError("the note store is locked")


@app.tool()
def huge(size: int) -> str:
    """A very long answer."""
    return "y" * size


@app.tool()
def picture() -> Image:
    """A tiny PNG."""
    return Image(data=PNG, format="png")


@app.tool()
def link() -> ResourceLink:
    """A link to the readme resource."""
    return ResourceLink(type="resource_link", uri="note://readme", name="readme")


@app.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@app.prompt()
def review(code: str) -> str:
    """Ask for a review of some code."""
    return f"Please review this code carefully:\n{code}"


@app.resource("note://readme", mime_type="text/plain")
def readme() -> str:
    """The notes readme."""
    return "Notes are plain text files."


def _serve_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app.streamable_http_app(host="127.0.0.1"), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


# lines that are no JSON-RPC message: invalid JSON, scalars, arrays, a batch, nesting too deep
# to parse recursively, an answer to nothing asked
GARBAGE = b"\n".join([
    b"this is not json", b"{not json", b"[]", b"null", b'"x"', b"12345", b"[" * 100_000,
    b'{"a":' * 100_000, b'[{"jsonrpc":"2.0","id":1,"result":{}}]', b"\xff\xfe",
    b'{"jsonrpc":"2.0","id":"nobody-asked","result":{}}']) + b"\n"


def _garbage_stdout() -> None:
    """Write lines that are no JSON-RPC message before everything the server writes."""
    real = sys.stdout.buffer.write

    def write(data: bytes) -> int:  # type: ignore[override]
        real(GARBAGE)
        return real(data)

    sys.stdout.buffer.write = write  # type: ignore[method-assign]


if __name__ == "__main__":
    print(f"demo server {os.getpid()} starting", file=sys.stderr, flush=True)
    if os.environ.get("DEMO_PID_FILE"):
        Path(os.environ["DEMO_PID_FILE"]).write_text(str(os.getpid()))
    if "--no-start" in sys.argv:
        time.sleep(3600)
    elif "--http" in sys.argv:
        _serve_http()
    else:
        app.run()
