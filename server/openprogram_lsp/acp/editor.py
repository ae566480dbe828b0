"""File access through the editor when it offers ``fs/*`` (so reads see unsaved buffers)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openprogram_lsp.acp.agent import OpenProgramAgent

MAX_READ_BYTES = 256 * 1024


def _disk_text(path: Path) -> str:
    with open(path, "rb") as fh:
        data = fh.read(MAX_READ_BYTES + 1)
    if b"\x00" in data[:8192]:
        raise ValueError("binary file")
    return data[:MAX_READ_BYTES].decode("utf-8", "replace")


async def read_text(agent: OpenProgramAgent, session_id: str, path: Path) -> str:
    """A workspace file's text: the editor's buffer when it offers reads, else the disk."""
    peer = agent.peer
    if peer is not None and agent.reads_files():
        resp = await peer.read_text_file(session_id=session_id,  # type: ignore[attr-defined]
                                         path=str(path))
        return str(resp.content)
    return await asyncio.to_thread(_disk_text, path)
