"""What each kind of rule covers, and nothing more."""

from __future__ import annotations

from typing import Any

import pytest

from openprogram_lsp.approvals.rules import CallFacts, Rule, decide, deciding, uncovered_parts
from openprogram_lsp.approvals.shell_split import split_command


def command_rule(value: str, decision: str = "allow", **kw: Any) -> Rule:
    return Rule(id="r", decision=decision, kind="command", tool="run_command",  # type: ignore[arg-type]
                value=value, **kw)


def run(command: str, session: str = "s1") -> CallFacts:
    return CallFacts(tool="run_command", kind="execute", arguments={"command": command},
                     session_id=session, parts=tuple(split_command(command)))


def edit(path: str, session: str = "s1", tool: str = "write_file") -> CallFacts:
    return CallFacts(tool=tool, kind="edit", arguments={"path": path, "content": "x"},
                     session_id=session, path=path)


def edit_rule(edit_scope: str, value: str | None, **kw: Any) -> Rule:
    return Rule(id="r", decision="allow", kind="edit", tool="write_file", value=value,
                edit_scope=edit_scope, **kw)  # type: ignore[arg-type]


# a rule for `ls *.txt` never reaches these (12+ shapes of compound commands)
@pytest.mark.parametrize("command", [
    "ls *.txt; touch PWNED; echo done.txt",
    "ls *.txt && touch PWNED",
    "ls *.txt || touch PWNED",
    "ls *.txt | sh",
    "ls *.txt\ntouch PWNED",
    "ls *.txt & touch PWNED",
    "ls $(touch PWNED)*.txt",
    "ls `touch PWNED`*.txt",
    "ls *.txt > PWNED",
    "(ls *.txt; touch PWNED)",
    "{ ls *.txt; touch PWNED; }",
    "ls *.txt; id > x.txt",
    "ls a.txt",
    "ls *.txt.bak",
    "if true; then ls *.txt; fi",
    "ls *.txt <(touch PWNED)",
])
def test_an_exact_command_rule_covers_no_other_command(command: str) -> None:
    assert decide([command_rule("ls *.txt")], run(command)) is None


def test_an_exact_command_rule_covers_its_command() -> None:
    assert decide([command_rule("ls *.txt")], run("ls *.txt")) == "allow"
    assert decide([command_rule("ls *.txt")], run("ls   *.txt ")) == "allow"


def test_a_compound_runs_when_every_part_is_allowed_and_a_denied_part_refuses_it() -> None:
    rules = [command_rule("ls a.txt"), command_rule("id > x.txt")]
    assert decide(rules, run("ls a.txt; id > x.txt")) == "allow"
    assert uncovered_parts(rules[:1], run("ls a.txt; id > x.txt")) == ["id > x.txt"]
    denied = [*rules, command_rule("id > x.txt", "deny")]
    assert decide(denied, run("ls a.txt; id > x.txt")) == "deny"


def test_an_opaque_command_needs_a_rule_for_its_whole_text() -> None:
    text = "for f in *; do echo $f; done"
    assert decide([command_rule("echo $f")], run(text)) is None
    assert decide([command_rule(text)], run(text)) == "allow"


def test_settings_patterns_apply_to_every_part() -> None:
    pattern = Rule(id="settings-1", decision="allow", kind="pattern", tool="run_command",
                   value="git status*", origin="settings")
    assert decide([pattern], run("git status --short")) == "allow"
    assert decide([pattern], run("git status; rm -rf x")) is None


def test_edit_rules_cover_their_file_folder_or_workspace_only() -> None:
    file_rule = edit_rule("file", "src/app.py")
    assert decide([file_rule], edit("src/app.py")) == "allow"
    assert decide([file_rule], edit("src/app.py", tool="edit_file")) == "allow"
    assert decide([file_rule], edit("src/other.py")) is None
    assert decide([file_rule], edit("src/app.py.bak")) is None
    folder = edit_rule("folder", "src")
    assert decide([folder], edit("src/deep/x.py")) == "allow"
    assert decide([folder], edit("srcx/a.py")) is None
    assert decide([folder], edit("README.md")) is None
    assert decide([edit_rule("workspace", None)], edit("anything/at/all")) == "allow"
    # an edit rule never allows a command
    assert decide([edit_rule("workspace", None)], run("touch x")) is None


def test_session_rules_stay_in_their_session() -> None:
    rule = edit_rule("file", "a.txt", scope="session", session_id="s1")
    assert decide([rule], edit("a.txt", session="s1")) == "allow"
    assert decide([rule], edit("a.txt", session="s2")) is None
    ws_rule = edit_rule("file", "a.txt", scope="workspace")
    assert decide([ws_rule], edit("a.txt", session="s2")) == "allow"


def test_call_rules_match_the_exact_input() -> None:
    rule = Rule(id="r", decision="allow", kind="call", tool="send_message",
                value='{"message":"hi","to":"b"}')
    facts = CallFacts(tool="send_message", kind="other",
                      arguments={"to": "b", "message": "hi"}, session_id="s1")
    assert decide([rule], facts) == "allow"
    other = CallFacts(tool="send_message", kind="other",
                      arguments={"to": "b", "message": "rm -rf"}, session_id="s1")
    assert decide([rule], other) is None


def test_the_rules_behind_a_decision_are_the_ones_that_made_it() -> None:
    ls, echo = command_rule("ls"), command_rule("echo hi").model_copy(update={"id": "r2"})
    rm = command_rule("rm -rf x", "deny").model_copy(update={"id": "r3"})
    assert deciding([ls, echo], run("ls && echo hi")) == [ls, echo]  # one per part
    assert deciding([ls, echo], run("ls; ls")) == [ls]
    assert deciding([ls], run("ls && id")) == []  # `id` has no rule: nothing decided
    assert deciding([ls, echo, rm], run("ls; rm -rf x")) == [rm]  # a deny decides alone
    file_rule = edit_rule("file", "src/a.py")
    assert deciding([file_rule], edit("src/a.py")) == [file_rule]
    assert deciding([file_rule], edit("src/b.py")) == []


def test_a_session_rule_covers_only_its_rules_scope_in_the_session() -> None:
    root = command_rule("ls", scope="session", session_id="s1")
    forked = command_rule("ls", scope="session", session_id="s1", branch="u-fork")
    on_fork = CallFacts(tool="run_command", kind="execute", arguments={"command": "ls"},
                        session_id="s1", parts=("ls",), rules_branch="u-fork")
    assert decide([root], run("ls")) == "allow" and decide([root], on_fork) is None
    assert decide([forked], on_fork) == "allow" and decide([forked], run("ls")) is None
    assert not root.same_coverage(forked)
    workspace = command_rule("ls", scope="workspace")
    assert decide([workspace], on_fork) == "allow"  # workspace rules reach every branch


def mcp_call(tool: str, *, destructive: bool = False, path: str | None = None) -> CallFacts:
    server, _, name = tool.removeprefix("mcp__").partition("__")
    return CallFacts(tool=tool, kind="delete" if destructive else "edit",
                     arguments={"path": path} if path else {}, session_id="s1",
                     mcp=(server, name), destructive=destructive)


def test_edit_rules_never_cover_an_mcp_tool() -> None:
    every_edit = edit_rule("workspace", None, scope="session", session_id="s1")
    assert decide([every_edit], edit("a.txt")) == "allow"
    for facts in (mcp_call("mcp__git__git_reset", destructive=True),
                  mcp_call("mcp__fs__move_file", destructive=True, path="a.txt"),
                  mcp_call("mcp__fs__write_file", path="a.txt")):
        assert decide([every_edit, edit_rule("file", "a.txt")], facts) is None


def test_a_destructive_mcp_tool_is_allowed_only_by_a_rule_naming_it() -> None:
    reset = mcp_call("mcp__git__git_reset", destructive=True)
    pattern = Rule(id="p", decision="allow", kind="pattern", tool="mcp__git__*",
                   origin="settings")
    other = Rule(id="t", decision="allow", kind="tool", tool="mcp__git__git_status")
    named = Rule(id="n", decision="allow", kind="tool", tool="mcp__git__git_reset")
    assert decide([pattern, other], reset) is None
    assert decide([pattern], mcp_call("mcp__git__git_log")) == "allow"  # not destructive
    assert decide([other], mcp_call("mcp__git__git_log")) is None  # another tool's rule
    assert decide([named], reset) == "allow"
    deny = Rule(id="d", decision="deny", kind="pattern", tool="mcp__git__*", origin="settings")
    assert decide([named, deny], reset) == "deny"  # a deny pattern still refuses it
