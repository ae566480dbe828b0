"""The EditorHost port over ACP: ``fs/*`` and ``terminal/*``, only when the client offers them.

Reads through the editor see its unsaved buffers; writes go through it so its buffers stay in
step; commands run in its terminals so the user watches them live. A client that did not
advertise a capability never receives those calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.ports import CommandResult

if TYPE_CHECKING:
    from openprogram_lsp.acp.view import AgentView

log = logging.getLogger(__name__)


def _why(exc: Exception) -> str:
    """A client error's message with its details (RequestError keeps them in ``data``)."""
    data = getattr(exc, "data", None)
    details = data.get("details") or data.get("message") if isinstance(data, dict) else None
    return f"{exc}: {details}" if details else str(exc)

MAX_READ_BYTES = 256 * 1024
OUTPUT_LIMIT = 64 * 1024


def _disk_text(path: Path) -> str:
    with open(path, "rb") as fh:
        data = fh.read(MAX_READ_BYTES + 1)
    if b"\x00" in data[:8192]:
        raise ValueError("binary file")
    return data[:MAX_READ_BYTES].decode("utf-8", "replace")


async def read_text(agent: AgentView, session_id: str, path: Path) -> str:
    """A workspace file's text for an attachment: the editor's buffer if offered, else disk."""
    text = await AcpEditor(agent).read_text(session_id, path)
    return text if text is not None else await asyncio.to_thread(_disk_text, path)


class AcpEditor:
    """Files and terminals of the ACP client, for the sessions of this connection."""

    def __init__(self, agent: AgentView) -> None:
        self.agent = agent
        self._cleanups: set[asyncio.Task[None]] = set()

    def _cleanup(self, peer: Any, session_id: str, tid: str) -> None:
        async def kill_and_release() -> None:
            for call in (peer.kill_terminal, peer.release_terminal):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(call(session_id=session_id, terminal_id=tid), 5)

        task = asyncio.get_running_loop().create_task(kill_and_release())
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)

    def _peer(self, session_id: str) -> tuple[Any, str]:
        """The client and the ACP id of the session a turn of ``session_id`` (a stored
        session's id) runs for; (None, id) when it is not open on this connection."""
        acp_id = self.agent.acp_id(session_id)
        return (self.agent.peer, acp_id) if acp_id is not None else (None, session_id)

    async def read_text(self, session_id: str, path: Path) -> str | None:
        """The client's view of the file; None when it does not offer reads."""
        fs = self.agent.client.fs
        peer, session_id = self._peer(session_id)
        if peer is None or fs is None or not fs.read_text_file:
            return None
        try:
            resp = await peer.read_text_file(session_id=session_id, path=str(path))
        except Exception as exc:
            raise ToolError(f"the editor could not read {path.name}: {_why(exc)}") from None
        return str(resp.content)

    async def write_text(self, session_id: str, path: Path, content: str) -> bool:
        """Write through the client; False when it does not offer writes."""
        fs = self.agent.client.fs
        peer, session_id = self._peer(session_id)
        if peer is None or fs is None or not fs.write_text_file:
            return False
        try:
            await peer.write_text_file(session_id=session_id, path=str(path), content=content)
        except Exception as exc:
            raise ToolError(f"the editor could not write {path.name}: {_why(exc)}") from None
        return True

    async def run_command(self, session_id: str, argv: list[str], cwd: Path,
                          timeout: float) -> CommandResult | None:
        """Run in a client terminal and wait (killed on timeout or cancel); None if not offered."""
        peer, session_id = self._peer(session_id)
        if peer is None or not self.agent.client.terminal:
            return None
        try:
            created = await peer.create_terminal(session_id=session_id, command=argv[0],
                                                 args=argv[1:], cwd=str(cwd),
                                                 output_byte_limit=OUTPUT_LIMIT)
        except Exception as exc:
            raise ToolError(f"the editor could not start a terminal: {_why(exc)}") from None
        tid = created.terminal_id
        self.agent.show_terminal(session_id, tid)
        timed_out = False
        try:
            try:
                exited = await asyncio.wait_for(
                    peer.wait_for_terminal_exit(session_id=session_id, terminal_id=tid), timeout)
            except TimeoutError:
                timed_out = True
                await peer.kill_terminal(session_id=session_id, terminal_id=tid)
                exited = None
            out = await peer.terminal_output(session_id=session_id, terminal_id=tid)
        except asyncio.CancelledError:
            # A cancel answers at once; the client is told to kill and release meanwhile.
            self._cleanup(peer, session_id, tid)
            tid = ""
            raise
        except Exception as exc:
            raise ToolError(f"the editor's terminal failed: {_why(exc)}") from None
        finally:
            if tid:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(
                        peer.release_terminal(session_id=session_id, terminal_id=tid)), 2)
        status = exited or out.exit_status
        code = status.exit_code if status is not None else None
        text = str(out.output) + ("\n[output truncated]" if out.truncated else "")
        return CommandResult(exit_code=code, output=text, timed_out=timed_out,
                             signal=status.signal if status is not None else None)

