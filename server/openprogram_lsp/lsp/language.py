"""The editor's language servers as the ``LanguageServers`` port (``openprogram/diagnostics``,
``openprogram/navigate``).

Only the connection driving a session is asked, and only when it declared
``experimental.openprogram.diagnostics``; the editor waits for its servers to settle (bounded
by ``timeout_ms``) and we wait a little longer for its answer, never more.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.uris import from_fs_path

from openprogram_lsp.core.diagnostics import Diagnostic
from openprogram_lsp.core.navigation import Navigation, NavigationKind, Place, Symbol
from openprogram_lsp.lsp.documents import doc_path
from openprogram_lsp.lsp.prompts import Withdrawn, _ask_client, _result_dict
from openprogram_lsp.lsp.wire import (
    DIAGNOSTICS,
    NAVIGATE,
    DiagnosticsParams,
    DiagnosticsResponse,
    NavigateParams,
    NavigateResponse,
)

if TYPE_CHECKING:
    from openprogram_lsp.lsp.link import Links

log = logging.getLogger(__name__)

SETTLE_MS = 300  # no change for this long: the servers are done with the edit
TIMEOUT_MS = 1500  # the editor answers by then whatever its servers do
SLACK = 0.5  # seconds we allow the answer on top of the editor's own bound
NAVIGATE_MS = 5000  # a navigation question's bound in the editor (servers may index first)


class EditorLanguageServers:
    """Diagnostics of the session's editor's language servers."""

    def __init__(self, host: Links, *, settle_ms: int = SETTLE_MS,
                 timeout_ms: int = TIMEOUT_MS) -> None:
        self.host = host
        self.settle_ms = settle_ms
        self.timeout_ms = timeout_ms

    def offers_diagnostics(self, session_id: str) -> bool:
        """Whether the driving editor declared ``experimental.openprogram.diagnostics``."""
        link = self.host.owner_for(session_id)
        return link is not None and link.settings.client.diagnostics

    async def diagnostics(self, session_id: str, paths: list[Path], *,
                          settle: bool, within: float | None = None,
                          ) -> dict[Path, list[Diagnostic]] | None:
        """Each file's diagnostics as the editor has them; None when it did not answer."""
        link = self.host.owner_for(session_id)
        if link is None or not link.settings.client.diagnostics or not paths:
            return None
        by_real = {os.path.realpath(p): p for p in paths}
        bound = self.timeout_ms if within is None else max(100, min(self.timeout_ms,
                                                                    int(within * 1000)))
        params = DiagnosticsParams(uris=[from_fs_path(str(p)) or "" for p in paths],
                                   settle_ms=self.settle_ms if settle else 0,
                                   timeout_ms=bound)
        resp = await _ask(link, DIAGNOSTICS, params.wire(), bound / 1000 + SLACK,
                          DiagnosticsResponse, "diagnostics")
        if resp is None:
            return None
        out: dict[Path, list[Diagnostic]] = {p: [] for p in paths}
        for f in resp.files:
            real = doc_path(f.uri)
            path = by_real.get(real) if real is not None else None
            if path is None:  # a file we did not ask about: not ours to report
                continue
            out[path] = [Diagnostic(line=d.range.start.line, character=d.range.start.character,
                                    message=d.message, severity=d.severity or 1,
                                    source=d.source or "",
                                    code="" if d.code is None else str(d.code))
                         for d in f.diagnostics]
        return out

    def offers_navigation(self, session_id: str) -> bool:
        """Whether the driving editor declared ``experimental.openprogram.navigation``."""
        link = self.host.owner_for(session_id)
        return link is not None and link.settings.client.navigation

    async def navigate(self, session_id: str, kind: NavigationKind, *, path: Path | None = None,
                       line: int = 0, character: int = 0,
                       query: str = "") -> Navigation | None:
        """Ask the driving editor; None when it cannot or did not answer in time."""
        link = self.host.owner_for(session_id)
        if link is None or not link.settings.client.navigation:
            return None
        params = NavigateParams(
            kind=kind, uri=from_fs_path(str(path)) if path is not None else None,
            position={"line": line, "character": character}
            if kind in ("definition", "references", "hover") else None,
            query=query if kind == "workspaceSymbols" else None, timeout_ms=NAVIGATE_MS)
        resp = await _ask(link, NAVIGATE, params.wire(), NAVIGATE_MS / 1000 + SLACK,
                          NavigateResponse, "navigation answer")
        if resp is None:
            return None
        out = Navigation(hover=resp.hover or "", servers=list(resp.servers))
        for loc in resp.locations:
            place = _place(loc.uri, loc.range.start.line, loc.range.start.character)
            if place is not None:
                out.places.append(place)
        for sym in resp.symbols:
            uri = sym.uri or params.uri
            out.symbols.append(Symbol(
                name=sym.name, kind=sym.kind, container=sym.container or "",
                place=_place(uri, sym.range.start.line, sym.range.start.character)
                if uri else None))
        return out


def _place(uri: str, line: int, character: int) -> Place | None:
    real = doc_path(uri)
    return Place(Path(real), line, character) if real is not None else None


_Answer = TypeVar("_Answer", bound=BaseModel)


async def _ask(link: Any, method: str, params: dict[str, Any], seconds: float,
               model: type[_Answer], what: str) -> _Answer | None:
    """Ask the editor; its answer validated, or None (logged) when it withdrew or sent
    something malformed."""
    try:
        raw = _result_dict(await _ask_client(link, method, params, seconds))
        return model.model_validate(raw or {})
    except Withdrawn as exc:
        log.info("no %s from the editor: %s", what, exc.reason)
    except ValidationError as exc:
        log.info("the editor's %s is malformed: %s", what, exc)
    return None
