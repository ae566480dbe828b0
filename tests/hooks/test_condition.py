"""A hook's ``if``: Claude Code's permission-rule syntax against the call as hooks see it."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.hooks.condition import holds

WS = "/ws"


def test_shell_commands_match_by_glob_or_legacy_prefix() -> None:
    git = {"command": "git push origin main"}
    assert holds("Bash(git *)", "PreToolUse", "run_command", git, WS)
    assert holds("run_command(git push:*)", "PostToolUse", "run_command", git, WS)
    assert not holds("Bash(npm *)", "PreToolUse", "run_command", git, WS)
    assert holds("Bash", "PreToolUse", "run_command", git, WS)
    assert not holds("Write", "PreToolUse", "run_command", git, WS)


def test_paths_match_gitignore_like_relative_to_the_workspace() -> None:
    def edit(path: str, rule: str) -> bool:
        return holds(rule, "PreToolUse", "edit_file", {"file_path": path}, WS)

    assert edit("/ws/src/a.ts", "Edit(*.ts)") and edit("/ws/a.ts", "Edit(*.ts)")
    assert not edit("/ws/src/a.py", "Edit(*.ts)")
    assert edit("/ws/src/deep/x.py", "Edit(/src/**)")
    assert not edit("/ws/lib/x.py", "Edit(/src/**)")
    assert edit("/ws/src/x.py", "Edit(src/*.py)")
    assert not edit("/ws/src/d/x.py", "Edit(src/*.py)")
    assert edit("/etc/hosts", "Edit(//etc/*)")
    assert not edit("/etc/hosts", "Edit(hosts)")  # a relative pattern: inside the workspace
    assert edit(str(Path.home() / ".bashrc"), "Edit(~/.bashrc)")


def test_hosts_and_events_without_a_tool() -> None:
    url = {"url": "https://docs.example.com/x"}
    assert holds("WebFetch(domain:example.com)", "PreToolUse", "web_fetch", url, WS)
    assert not holds("WebFetch(domain:other.com)", "PreToolUse", "web_fetch", url, WS)
    assert not holds("Bash(*)", "Stop", None, {}, WS)  # never on an event without a call
    assert not holds("Bash(git *", "PreToolUse", "run_command", {"command": "git"}, WS)
