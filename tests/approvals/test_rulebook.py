"""The rule book: persisted, re-read when changed, revocable, settings rules kept apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openprogram_lsp.approvals.rulebook import RuleBook, RuleNotRevocable, with_client_rules
from openprogram_lsp.approvals.rules import CallFacts, Rule
from openprogram_lsp.approvals.shell_split import split_command
from openprogram_lsp.core.errors import NotFound


def run(command: str) -> CallFacts:
    return CallFacts(tool="run_command", kind="execute", arguments={"command": command},
                     session_id="s1", parts=tuple(split_command(command)))


def allow(value: str) -> Rule:
    return Rule(id="", decision="allow", kind="command", tool="run_command", value=value,
                tool_call_id="call_1", turn_id="t1")


def test_rules_persist_with_id_origin_and_time(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    book = RuleBook.for_workspace(tmp_path, ws)
    added = book.add(allow("npm test"))
    assert added.id and added.created_at and added.tool_call_id == "call_1"
    again = RuleBook.for_workspace(tmp_path, ws)
    assert again.decide(run("npm test")) == "allow"
    assert again.decide(run("npm test; rm -rf /")) is None
    assert [r.id for r in again.listed()] == [added.id]


def test_a_revoke_takes_effect_in_every_book_of_the_file_at_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first, second = RuleBook.for_workspace(tmp_path, ws), RuleBook.for_workspace(tmp_path, ws)
    rule = first.add(allow("make"))
    assert second.decide(run("make")) == "allow"
    second.revoke(rule.id)
    assert first.decide(run("make")) is None
    with pytest.raises(NotFound):
        first.revoke(rule.id)


def test_deleting_the_file_forgets_its_rules_without_a_restart(tmp_path: Path) -> None:
    book = RuleBook(tmp_path / "rules" / "w.json")
    book.add(allow("make"))
    assert book.decide(run("make")) == "allow"
    (tmp_path / "rules" / "w.json").unlink()
    assert book.decide(run("make")) is None


def test_an_equal_rule_replaces_the_old_one(tmp_path: Path) -> None:
    book = RuleBook(tmp_path / "r.json")
    book.add(allow("make"))
    second = book.add(allow("make"))
    assert [r.id for r in book.rules] == [second.id]


def test_settings_rules_are_listed_not_stored_and_not_revocable(tmp_path: Path) -> None:
    book = RuleBook(tmp_path / "r.json")
    kept = book.add(allow("make"))
    setting = Rule(id="settings-1", decision="allow", kind="pattern", tool="write_file",
                   origin="settings")
    book.replace_config_rules([setting])
    assert [r.id for r in book.listed()] == [kept.id, "settings-1"]
    with pytest.raises(RuleNotRevocable):
        book.revoke("settings-1")
    book.replace_config_rules([])
    assert [r.id for r in RuleBook(tmp_path / "r.json").rules] == [kept.id]


def test_old_rule_files_load_as_exact_commands_never_globs(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"rules": [
        {"tool": "run_command", "decision": "allow", "pattern": "ls *.txt"},
        {"tool": "write_file", "decision": "allow", "pattern": None}]}))
    book = RuleBook(path)
    assert book.decide(run("ls *.txt")) == "allow"
    assert book.decide(run("ls *.txt; touch PWNED; echo done.txt")) is None
    assert {r.origin for r in book.rules} == {"legacy"}
    legacy_edit = next(r for r in book.rules if r.tool == "write_file")
    book.revoke(legacy_edit.id)
    assert len(RuleBook(path).rules) == 1


def test_session_rules_are_listed_for_their_session(tmp_path: Path) -> None:
    book = RuleBook(tmp_path / "r.json")
    mine = book.add(allow("make").model_copy(update={"scope": "session", "session_id": "s1"}))
    ws_rule = book.add(allow("ls"))
    assert [r.id for r in book.listed("s2")] == [ws_rule.id]
    assert {r.id for r in book.listed("s1")} == {mine.id, ws_rule.id}


class Setting:
    """An editor's settings: their rules as they are now."""

    def __init__(self, rules: list[Rule]) -> None:
        self.current = rules

    def rules(self) -> list[Rule]:
        return self.current


def test_an_editors_settings_rules_are_read_live_and_not_revoked_here(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    book = RuleBook.for_workspace(tmp_path, ws)
    pattern = Rule(id="settings-1", decision="allow", kind="pattern", tool="run_command",
                   value="make *", origin="settings")
    setting = Setting([pattern])
    seen = with_client_rules(book, [setting])
    assert seen.decide(run("make all")) == "allow"
    with pytest.raises(RuleNotRevocable):
        seen.revoke("settings-1")
    setting.current = []  # the editor removed it: the very next decision asks
    assert seen.decide(run("make all")) is None
    added = seen.add(allow("make all"))  # a prompt's rule goes to the workspace's book
    assert [r.id for r in book.rules] == [added.id]
    assert seen.revoke(added.id).id == added.id and book.rules == []
    assert with_client_rules(book, []) is book
