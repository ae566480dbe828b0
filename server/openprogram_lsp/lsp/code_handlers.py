"""Handlers where code follows the conversation: branches with their code state, checkout with
``restoreCode``, ``branchDiff``, and the code restore before a fork."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.core.errors import CheckpointError, SessionBusy
from openprogram_lsp.lsp import dumps
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.requests import handles
from openprogram_lsp.store import branch_code
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.checkpoints.results import RestoreOutcome
from openprogram_lsp.store.session_store import SessionStore

if TYPE_CHECKING:
    from openprogram_lsp.lsp.view import HandlersView


class CodeHandlers:
    """``branches``, ``checkout``, ``branchDiff`` and ``fork {restoreCode}``."""

    def __init__(self, handlers: HandlersView) -> None:
        self.h = handlers

    @property
    def sessions(self) -> SessionStore:
        return self.h.dispatcher.services.store

    def store_of(self, sid: str) -> CheckpointStore | None:
        """The checkpoint store of a session's workspace (None when there is none)."""
        workspace = self.sessions.meta(sid).get("workspace") or self.h.server.primary_workspace
        cp = self.h.dispatcher.checkpointer(Path(workspace))
        return cp if isinstance(cp, CheckpointStore) else None

    def _require_store(self, sid: str) -> CheckpointStore:
        store = self.store_of(sid)
        if store is None:
            raise CheckpointError("checkpoints are not available for this session's workspace")
        return store

    def _idle(self, sid: str, what: str) -> None:
        if self.h.dispatcher.user_turn(sid) is not None:
            raise SessionBusy(f"session {sid} is running a turn; cancel it before {what}")

    @handles("openprogram/branches")
    async def branches(self, p: w.SessionParams) -> dict[str, Any]:
        sid = self.h._session(p.session_id)
        rows = self.sessions.list_branches(sid)
        store = self.store_of(sid)
        if store is not None:
            rows = await asyncio.to_thread(branch_code.branch_code, self.sessions, store, sid,
                                           rows)
        return w.BranchesResult(branches=[dumps.model(w.BranchInfo, r) for r in rows]).wire()

    async def restore_code(self, sid: str, node_id: str,
                           keep: list[str] | None = None) -> RestoreOutcome:
        """Bring the workspace to the code state of the chain ending at ``node_id``, except
        the ``keep`` files (the user's own changes, left as they are)."""
        store = self._require_store(sid)
        self.h._refuse_during_turn()
        out = await asyncio.to_thread(branch_code.switch_code, self.sessions, store, sid,
                                      node_id, keep=keep or ())
        self.h._changed(out)
        return out

    @handles("openprogram/checkout")
    async def checkout(self, p: w.CheckoutParams) -> dict[str, Any]:
        sid = self.h._session(p.session_id)
        self.h._node(sid, p.head_id, "headId")
        self._idle(sid, "checkout")
        previous = self.sessions.head(sid)
        result: dict[str, Any] = {}
        if p.restore_code:
            result = dumps.code_restore(await self.restore_code(sid, p.head_id, p.keep_paths))
        self.sessions.set_head(sid, p.head_id)
        return w.CheckoutResult.model_validate(
            {"headId": p.head_id, "previousHeadId": previous, **result}).wire()

    @handles("openprogram/branchDiff")
    async def branch_diff(self, p: w.BranchDiffParams) -> dict[str, Any]:
        sid = self.h._session(p.session_id)
        self.h._node(sid, p.from_head_id, "fromHeadId")
        self.h._node(sid, p.to_head_id, "toHeadId")
        store = self._require_store(sid)
        out = await asyncio.to_thread(branch_code.branch_diff, self.sessions, store, sid,
                                      p.from_head_id, p.to_head_id, p.path)
        return dumps.dump(w.BranchDiffResult, out)

