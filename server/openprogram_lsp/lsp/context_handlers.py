"""``openprogram/files`` (@-mention completion), ``openprogram/commands`` (slash commands) and
``openprogram/image`` (a stored image, for thumbnails in history)."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.context.commands import load_commands
from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.core.images import ImageError, load_base64, sniff_image
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.requests import handles

if TYPE_CHECKING:
    from openprogram_lsp.lsp.view import ConnectionView


class ContextHandlers:
    """What an editor's input box completes: files after ``@``, commands after ``/``."""

    def __init__(self, server: ConnectionView) -> None:
        self.server = server

    def _root(self) -> Path:
        return Path(self.server.primary_workspace).resolve()

    @handles("openprogram/files")
    async def files(self, p: w.FilesParams) -> dict[str, Any]:
        """Workspace files for a fuzzy query, best first."""
        root = self._root()
        found, total = await asyncio.to_thread(self.server.host.file_list(root).query,
                                               p.query, p.limit)
        return w.FilesResult(files=[w.FileEntry(path=m.path, uri=(root / m.path).as_uri())
                                    for m in found], total=total).wire()

    @handles("openprogram/commands")
    async def commands(self, _p: w.EmptyParams) -> dict[str, Any]:
        """The built-in and custom slash commands of the workspace."""
        found = await asyncio.to_thread(load_commands, self._root())
        return w.CommandsResult(commands=[w.CommandInfo.model_validate(c.listing())
                                          for c in found]).wire()

    @handles("openprogram/image")
    async def image(self, p: w.ImageParams) -> dict[str, Any]:
        """A stored image by hash (checked on read), sniffed again for its media type."""
        try:
            data = await asyncio.to_thread(load_base64, p.sha256)
        except ImageError:
            raise NotFound(f"sha256: no stored image {p.sha256[:12]}") from None
        mime, _w, _h = sniff_image(base64.b64decode(data[:87384]))  # its first 64 KB
        return w.ImageResult(media_type=mime, data=data).wire()
