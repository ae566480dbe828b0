"""A branch of a session as Claude Code's transcript: one JSON object per line.

Hooks read ``transcript_path`` as Claude Code writes it: ``{"type": "user" | "assistant",
"uuid", "parentUuid", "sessionId", "cwd", "timestamp", "isSidechain", "message": {"role",
"content"}}``, where an assistant's content is ``text`` and ``tool_use`` blocks (Claude Code's
tool names and inputs, ``claude_tools``) and a tool's result is a user line with a
``tool_result`` block. It is rendered from the store at each hook call, for the running turn's
branch (the one the model sees), into our state root; the file is replaced whole (a reader never
sees half a file).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openprogram_lsp.context.render import render_chain
from openprogram_lsp.core.ids import now_iso
from openprogram_lsp.core.types import Message, Node
from openprogram_lsp.hooks.claude_tools import claude_input, claude_name

VERSION = "openprogram-lsp"


def lines(messages: list[Message], *, session_id: str, cwd: str,
          sidechain: bool = False) -> Iterator[dict[str, Any]]:
    """The transcript's entries for a rendered branch."""
    parent: str | None = None
    stamp = now_iso()
    for i, msg in enumerate(messages):
        if msg.role == "system":
            continue
        ident = str(uuid.uuid5(uuid.NAMESPACE_URL, f"openprogram:{session_id}:{i}"))
        entry: dict[str, Any] = {"parentUuid": parent, "isSidechain": sidechain,
                                 "userType": "external", "cwd": cwd, "sessionId": session_id,
                                 "version": VERSION, "uuid": ident, "timestamp": stamp}
        if msg.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if msg.content:
                blocks.append({"type": "text", "text": msg.content})
            blocks.extend({"type": "tool_use", "id": call.id, "name": claude_name(call.name),
                           "input": claude_input(call.name, call.arguments, cwd)}
                          for call in msg.tool_calls)
            entry.update(type="assistant", message={"role": "assistant", "type": "message",
                                                    "content": blocks})
        elif msg.role == "tool":
            entry.update(type="user", message={"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": msg.tool_call_id,
                 "content": msg.content, "is_error": msg.is_error}]})
        else:
            entry.update(type="user", message={"role": "user", "content": msg.content})
        parent = ident
        yield entry


def write(path: Path, chain: list[Node], *, session_id: str, cwd: str,
          sidechain: bool = False) -> None:
    """Render a branch (root first) to ``path``, replacing the file whole."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = "".join(json.dumps(e, ensure_ascii=False, default=str) + "\n" for e in lines(
        render_chain(chain), session_id=session_id, cwd=cwd, sidechain=sidechain))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".transcript-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(body)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
