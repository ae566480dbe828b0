"""Slash commands: built-ins, custom Markdown commands, $ARGUMENTS and positional arguments."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.context.commands import expand, load_commands, parse


def test_custom_commands_and_expansion(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".openprogram" / "commands").mkdir(parents=True)
    (ws / ".claude" / "commands" / "git").mkdir(parents=True)
    (ws / ".openprogram" / "commands" / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: PATH\n---\nReview $ARGUMENTS "
        "carefully; start with $1.\n", "utf-8")
    (ws / ".claude" / "commands" / "git" / "log.md").write_text("Summarise the log.\n", "utf-8")
    (ws / ".claude" / "commands" / "compact.md").write_text("shadowed\n", "utf-8")
    user = tmp_path / "user"
    user.mkdir()
    (user / "review.md").write_text("the user's review\n", "utf-8")
    found = {c.name: c for c in load_commands(ws, user=user)}
    assert {"compact", "fork", "undo", "model", "mode", "new"} <= set(found)
    assert found["compact"].source == "builtin"
    review = found["review"]
    assert (review.source, review.description, review.argument_hint) == (
        "workspace", "Review a file", "PATH")
    assert found["git:log"].description == "Summarise the log."
    assert expand(review, "a.py b.py") == "Review a.py b.py carefully; start with a.py."
    assert expand(found["git:log"], "--since monday") == \
        "Summarise the log.\n\nARGUMENTS: --since monday"
    assert parse("/review a.py") == ("review", "a.py")
    assert parse("/git:log") == ("git:log", "")
    assert parse("not /a command") is None and parse("/") is None
