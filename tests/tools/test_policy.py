from pathlib import Path

import pytest

from openprogram_lsp.tools.builtin import builtin_tools
from openprogram_lsp.tools.policy import Rule, RuleBook, mode_decision
from openprogram_lsp.tools.registry import ToolRegistry, admit


@pytest.mark.parametrize(("mode", "kind", "expected"), [
    ("ask", "read", "allow"), ("ask", "edit", "ask"), ("ask", "execute", "ask"),
    ("accept-edits", "edit", "allow"), ("accept-edits", "execute", "ask"),
    ("plan", "search", "allow"), ("plan", "edit", "deny"), ("plan", "execute", "deny"),
    ("bypass", "execute", "allow"),
])
def test_mode_decisions(mode: str, kind: str, expected: str) -> None:
    assert mode_decision(mode, kind) == expected  # type: ignore[arg-type]


def test_rules_persist_and_deny_beats_allow(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    book = RuleBook.for_workspace(tmp_path, ws)
    book.add(Rule("write_file", "allow"))
    book.add(Rule("run_command", "allow", "npm test"))
    again = RuleBook.for_workspace(tmp_path, ws)
    assert again.decide("write_file", {"path": "a"}) == "allow"
    assert again.decide("run_command", {"command": "npm test"}) == "allow"
    assert again.decide("run_command", {"command": "rm -rf /"}) is None
    again.add(Rule("*", "deny", "secrets/*"))
    assert again.decide("write_file", {"path": "secrets/k"}) == "deny"


def test_static_admission_order() -> None:
    assert not admit("run_command", "core", disabled=["run_*"], allowed=["run_command"])
    assert admit("grep", "core", allowed=["grep"], categories=[])
    assert not admit("grep", "core", allowed=["read_*"], categories=["net"])
    assert admit("grep", "core", categories=["co*"])
    reg = ToolRegistry(builtin_tools()).admitted(disabled=["run_command", "write_*"])
    assert "run_command" not in reg.names() and "read_file" in reg.names()
    with pytest.raises(ValueError):
        ToolRegistry([*builtin_tools(), builtin_tools()[0]])


def test_config_rules_are_replaced_not_accumulated(tmp_path: Path) -> None:
    book = RuleBook(tmp_path / "rules.json")
    book.add(Rule("grep", "deny"))
    book.replace_config_rules([Rule("write_file", "allow")])
    assert book.decide("write_file", {"path": "a"}) == "allow"
    book.replace_config_rules([])
    assert book.decide("write_file", {"path": "a"}) is None
    assert book.decide("grep", {}) == "deny"  # remembered rules stay
    assert RuleBook(tmp_path / "rules.json").rules == [Rule("grep", "deny")]
