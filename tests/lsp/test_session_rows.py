"""The sessions result built as dicts is what the wire models give, and a damaged listed row
gets defaults instead of failing the request."""

from __future__ import annotations

import random
from typing import Any

from openprogram_lsp.lsp import wire as w
from openprogram_lsp.lsp.session_rows import sessions_result


def _modelled(rows: list[dict[str, Any]], total: int, offset: int) -> dict[str, Any]:
    """What the handler built before: one ``SessionInfo`` model a row."""
    infos = [w.SessionInfo(id=r["id"], title=r.get("title") or "", head_id=r.get("headId"),
                           status=r.get("status") or "idle", updated_at=r.get("updatedAt") or "",
                           workspace=r.get("workspace")) for r in rows]
    return w.SessionsResult(sessions=infos, total=total,
                            has_more=offset + len(infos) < total).wire()


def test_rows_as_dicts_equal_the_models_dump() -> None:
    rng = random.Random(7)
    choices: dict[str, list[Any]] = {
        "title": ["", "a title", "ünïcödé \u2028", None], "headId": ["n1", None],
        "status": ["idle", "running"], "updatedAt": ["2026-12-08T01:00:00Z", "", None],
        "workspace": ["/w/ü", None], "createdAt": ["2026-01-01T00:00:00Z"],
        "running": [{"t": {"pid": 1}}, None]}
    for total in (0, 1, 7, 300):
        rows = []
        for i in range(min(total, 50)):
            row: dict[str, Any] = {"id": f"s{i}"}
            for key, values in choices.items():
                if rng.random() < 0.8:
                    row[key] = rng.choice(values)
            rows.append(row)
        for offset in (0, 3):
            assert sessions_result(rows, total, offset) == _modelled(rows, total, offset)
    w.SessionsResult.model_validate(sessions_result(rows, 300, 0))


def test_a_damaged_row_gets_defaults_and_the_page_is_answered() -> None:
    rows = [{"id": "s1", "title": 5, "headId": ["x"], "status": None, "updatedAt": {},
             "workspace": 3}]
    got = sessions_result(rows, 1, 0)
    assert got == {"sessions": [{"id": "s1", "title": "", "status": "idle", "updatedAt": ""}],
                   "total": 1, "hasMore": False}
    w.SessionsResult.model_validate(got)


def test_the_dicts_name_every_field_the_wire_models_have() -> None:
    """A field added to ``SessionInfo`` or ``SessionsResult`` (lsp/wire.py, the one source)
    fails here until ``session_rows`` builds it too."""
    def names(model: Any) -> set[str]:
        return {f.serialization_alias or f.alias or n for n, f in model.model_fields.items()}

    full = {"id": "s", "title": "t", "headId": "h", "status": "idle", "updatedAt": "u",
            "workspace": "/w"}
    got = sessions_result([full], 1, 0)
    assert set(got) == names(w.SessionsResult)
    assert set(got["sessions"][0]) == names(w.SessionInfo)
