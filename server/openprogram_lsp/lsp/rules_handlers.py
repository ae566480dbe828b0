"""Handlers of ``openprogram/rules`` and ``openprogram/revokeRule`` over every workspace folder.

A connection sees the rules of each of its folders (the rule books under the state root) and
its own settings rules (the editor's ``rules`` option, listed once, ``revocable: false``: the
editor removes them by changing the setting, which takes effect at once).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.approvals.rulebook import RuleBook, RuleNotRevocable
from openprogram_lsp.approvals.rules import Rule
from openprogram_lsp.core.errors import InvalidParams, NotFound
from openprogram_lsp.events.bus import make_event
from openprogram_lsp.lsp import dumps
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.requests import handles
from openprogram_lsp.store.approval_records import approval_records

if TYPE_CHECKING:
    from openprogram_lsp.lsp.view import ConnectionView


def _info(rule: Rule, workspace: Path | None, *, revocable: bool) -> w.RuleInfo:
    return w.RuleInfo.model_validate({**rule.model_dump(), "revocable": revocable,
                                      "workspace": str(workspace) if workspace else None})


class RulesHandlers:
    """The standing approval rules of one connection's folders, listed and revoked."""

    def __init__(self, server: ConnectionView) -> None:
        self.server = server

    def _folders(self, workspace: str | None) -> list[Path]:
        folders = self.server.folders or [Path(self.server.primary_workspace)]
        folders = [f.resolve() for f in folders]
        if workspace is None:
            return folders
        wanted = Path(workspace).expanduser().resolve()
        if wanted not in folders:
            raise InvalidParams(f"workspace: {workspace!r} is not a workspace folder of this "
                                "editor")
        return [wanted]

    def _book(self, folder: Path) -> RuleBook:
        return self.server.dispatcher.services.rules_for(folder)

    @handles("openprogram/rules")
    async def rules(self, p: w.RulesParams) -> dict[str, Any]:
        infos = [_info(r, folder, revocable=True)
                 for folder in self._folders(p.workspace)
                 for r in self._book(folder).listed(p.session_id)]
        infos += [_info(r, None, revocable=False) for r in self.server.settings.rules()]
        if not p.records:
            return w.RulesResult(rules=infos).wire()
        if p.session_id is None:
            raise InvalidParams("records: needs a sessionId")
        store = self.server.dispatcher.services.store
        if not store.exists(p.session_id):
            raise NotFound(f"sessionId: unknown session id {p.session_id!r}")
        start = 0
        if p.cursor is not None:
            if not p.cursor.isdigit():
                raise InvalidParams("cursor: not a cursor this method returned")
            start = int(p.cursor)
        every = await asyncio.to_thread(approval_records, store, p.session_id)
        page = every[start:start + p.limit]
        more = start + p.limit < len(every)
        return w.RulesResult(
            rules=infos, records=[dumps.model(w.ApprovalRecordInfo, r) for r in page],
            next_cursor=str(start + p.limit) if more else None).wire()

    @handles("openprogram/revokeRule")
    async def revoke_rule(self, p: w.RevokeRuleParams) -> dict[str, Any]:
        if any(r.id == p.rule_id for r in self.server.settings.rules()):
            raise RuleNotRevocable(f"ruleId: rule {p.rule_id} comes from the editor's rules "
                                   "setting; remove it there (it takes effect at once)")
        for folder in self._folders(p.workspace):
            try:
                rule = self._book(folder).revoke(p.rule_id)
            except NotFound:
                continue
            self.server.dispatcher.services.bus.emit(make_event(
                "rules.changed", {"action": "revoked", "rule_ids": [rule.id],
                                  "workspace": str(folder)},
                session_id=None, turn_id=None, origin="lsp"))
            return w.RevokeRuleResult(revoked=_info(rule, folder, revocable=True)).wire()
        raise NotFound(f"ruleId: no rule {p.rule_id!r} in the workspace folders")
