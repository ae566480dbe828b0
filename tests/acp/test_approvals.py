"""The options every kind of approval offers over ACP: one per ACP kind, scoped names, the
narrowest standing rule (this session) first, from the same choices the LSP cards offer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.acp.approvals import acp_options
from openprogram_lsp.approvals.choices import Origin, choices_for
from openprogram_lsp.approvals.facts import call_facts

CASES: list[tuple[str, str, dict[str, Any], dict[str, Any], str]] = [
    ("write_file", "edit", {"path": "src/a.txt", "content": "x"}, {}, "this file"),
    ("run_command", "execute", {"command": "make test"}, {}, "this command"),
    ("run_command", "execute", {"command": "make && make test"}, {}, "these commands"),
    ("web_fetch", "fetch", {"url": "https://example.com/x"}, {}, "this host"),
    ("mcp__notes__delete", "delete", {"name": "a"}, {"mcp": ("notes", "delete")},
     "this MCP tool"),
    ("ask_something", "other", {"q": 1}, {}, "this exact call"),
]


@pytest.mark.parametrize(("tool", "kind", "args", "extra", "scope"), CASES)
def test_one_option_per_kind_named_by_scope_narrowest_first(
        workspace: Path, tool: str, kind: str, args: dict[str, Any], extra: dict[str, Any],
        scope: str) -> None:
    (workspace / "src").mkdir()
    facts = call_facts(workspace, tool, kind, args, "s1", **extra)
    choices = choices_for(facts, Origin("s1", "t1", "c1"), title=tool, uncovered=[])
    offered = acp_options([c.option for c in choices], kind)
    assert [o.kind for o in offered] == ["allow_once", "allow_always", "reject_once",
                                         "reject_always"]
    assert len({o.name for o in offered}) == 4
    standing = next(c for c in choices if c.option.option_id == offered[1].option_id)
    assert all(rule.scope == "session" for rule in standing.rules)  # the narrowest
    assert offered[1].name == f"Always, {scope} (this session)"
    never = "this command" if scope == "these commands" else scope  # the whole line denied
    assert offered[3].name == f"Never, {never} (whole workspace)"
