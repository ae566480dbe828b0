"""Unsaved editor buffers in checkpoints (docs/decisions/unsaved-buffers.md).

When the agent edits a file whose editor buffer has unsaved changes, the edit goes into the
buffer, not the disk. From then on the store records that path as the buffer's text, not the
disk's, for as long as the buffer stays unsaved (``BufferOverlay``): each checkpoint's tree
holds what the user sees, and the commit names such paths (``Openprogram-Buffer``) so lists can
say the change is unsaved. Once the buffer is saved, reverted or closed the disk speaks again.
A restore puts such a path back through the editor (``BufferSink``), never under it on disk.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from typing import Protocol

Current = Callable[[], str | None]
"""The buffer's text while it differs from the disk; None once it is saved, reverted or closed."""


class BufferSink(Protocol):
    """The editor's open documents, as a restore sees them (callable from a worker thread)."""

    def unsaved(self, rel: str) -> str | None:
        """The buffer's text of a workspace path while it differs from the disk."""
        ...

    def apply(self, rel: str, old: str, new: str) -> str:
        """Turn the buffer's ``old`` text (all of it) into ``new``, unsaved; "" when done,
        else why not."""
        ...


class BufferOverlay:
    """The paths whose checkpointed content is an editor buffer's unsaved text."""

    def __init__(self) -> None:
        self._live: dict[str, Current] = {}
        self._seen: dict[str, str] = {}  # the text each path's last checkpoint recorded
        self._lock = threading.Lock()

    def track(self, rel: str, current: Current) -> None:
        """Record ``rel`` as its buffer's text from the next checkpoint on."""
        with self._lock:
            self._live[rel] = current

    def tracked(self, rel: str) -> bool:
        with self._lock:
            return rel in self._live

    def take(self) -> tuple[dict[str, str], list[str]]:
        """(rel -> the buffer's text now, paths whose buffer is no longer unsaved: dropped,
        their disk is read again)."""
        with self._lock:
            items = list(self._live.items())
        texts: dict[str, str] = {}
        gone: list[str] = []
        for rel, current in items:
            try:
                text = current()
            except Exception:  # an editor connection that went away mid-read
                text = None
            if text is None:
                gone.append(rel)
            else:
                texts[rel] = text
        if gone:
            with self._lock:
                for rel in gone:
                    self._live.pop(rel, None)
                    self._seen.pop(rel, None)
        return texts, gone

    def recorded(self, texts: dict[str, str]) -> None:
        """What the commit just made holds for each buffer path."""
        with self._lock:
            self._seen.update(texts)

    def changed(self) -> bool:
        """Whether a buffer path differs from what the last checkpoint recorded for it (the
        user typed, saved or closed it since): cheap, no file is read."""
        with self._lock:
            items = list(self._live.items())
            seen = dict(self._seen)
        for rel, current in items:
            try:
                text = current()
            except Exception:
                text = None
            if text is None or text != seen.get(rel):
                return True
        return False


def buffer_bytes(text: str) -> bytes:
    """A buffer's text as the bytes a save would write (UTF-8; a lone surrogate, which an LSP
    client can send, is replaced rather than failing the checkpoint)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def git_mode(workspace: str, rel: str) -> str:
    """The git mode a buffer's text is recorded with: the file's executable bit, if any."""
    try:
        st = os.lstat(os.path.join(workspace, rel))
    except OSError:
        return "100644"
    return "100755" if stat.S_ISREG(st.st_mode) and st.st_mode & 0o100 else "100644"
