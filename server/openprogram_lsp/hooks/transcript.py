"""A branch of a session as Claude Code's transcript: one JSON object per line.

Hooks read ``transcript_path`` as Claude Code writes it: ``{"type": "user" | "assistant",
"uuid", "parentUuid", "sessionId", "cwd", "timestamp", "isSidechain", "message": {"role",
"content"}}``, where an assistant's content is ``text`` and ``tool_use`` blocks (Claude Code's
tool names and inputs, ``claude_tools``) and a tool's result is a user line with a
``tool_result`` block. It is rendered from the store at each hook call, for the running turn's
branch (the one the model sees), into our state root; the file is replaced whole (a reader never
sees half a file). A ``Transcript`` keeps each node's lines while the store hands out the same
node object (the store's index replaces a node's object when it is rewritten), so a hook call
on a long branch serializes only what changed.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openprogram_lsp.context.render import render_one
from openprogram_lsp.core.ids import now_iso
from openprogram_lsp.core.types import Message, Node
from openprogram_lsp.tools.claude_tools import claude_input, claude_name

VERSION = "openprogram-lsp"


def entries(messages: list[Message], *, session_id: str, cwd: str, key: str,
            parent: str | None, stamp: str, sidechain: bool = False
            ) -> Iterator[dict[str, Any]]:
    """The transcript's entries for one node's messages (``key`` names the node)."""
    for i, msg in enumerate(messages):
        if msg.role == "system":
            continue
        ident = str(uuid.uuid5(uuid.NAMESPACE_URL, f"openprogram:{session_id}:{key}:{i}"))
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


class Transcript:
    """One transcript file, re-rendered from a branch at each hook call."""

    def __init__(self, path: Path, *, session_id: str, cwd: str,
                 sidechain: bool = False) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.sidechain = sidechain
        # node id -> (the node object, the parent uuid it was rendered after, its lines, the
        # uuid of its last entry)
        self._nodes: dict[str, tuple[Node, str | None, str, str | None]] = {}
        self._lock = threading.Lock()  # hooks of one turn may run side by side

    def _node(self, node: Node, parent: str | None) -> tuple[str, str | None]:
        hit = self._nodes.get(node.id)
        if hit is not None and hit[0] is node and hit[1] == parent:
            return hit[2], hit[3]
        last = parent
        out = []
        for entry in entries(render_one(node), session_id=self.session_id, cwd=self.cwd,
                             key=node.id, parent=parent, stamp=node.created_at or now_iso(),
                             sidechain=self.sidechain):
            out.append(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
            last = entry["uuid"]
        text = "".join(out)
        self._nodes[node.id] = (node, parent, text, last)
        return text, last

    def write(self, chain: list[Node]) -> None:
        """Render a branch (root first) to the file, replacing it whole."""
        with self._lock:
            self._write(chain)

    def _write(self, chain: list[Node]) -> None:
        parts: list[str] = []
        parent: str | None = None
        for node in chain:
            if (node.metadata or {}).get("command") == "compact":
                continue
            text, parent = self._node(node, parent)
            parts.append(text)
        if len(self._nodes) > 4 * len(chain) + 64:  # another branch's nodes: forget them
            keep = {n.id for n in chain}
            self._nodes = {k: v for k, v in self._nodes.items() if k in keep}
        _replace(self.path, "".join(parts))


def _replace(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".transcript-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(body)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write(path: Path, chain: list[Node], *, session_id: str, cwd: str,
          sidechain: bool = False) -> None:
    """Render a branch (root first) to ``path`` once (no cache kept)."""
    Transcript(path, session_id=session_id, cwd=cwd, sidechain=sidechain).write(chain)
