"""``openprogram-lsp hooks`` and ``chat`` with workspace hooks, through a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.hooks.helpers import on, workspace_settings
from tests.test_cli import run


def test_untrusted_hooks_wait_then_trust_and_revoke_from_the_cli(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    workspace_settings(ws, on("PreToolUse", "echo 'hook says no' >&2; exit 2", matcher="Write"),
                       rel=".claude/settings.json")
    chat = ["chat", "--workspace", str(ws), "--permission-mode", "bypass", "--json",
            "write a.txt\nx"]
    first = run(chat, home, tmp_path)
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout.splitlines()[-1])["data"]
    assert (ws / "a.txt").exists()  # no one could approve the hook, so it did not run
    assert "await approval" in result["warnings"][0]

    listed = json.loads(run(["hooks", "--workspace", str(ws), "--json"], home, tmp_path).stdout)
    [hook] = listed["hooks"]
    assert hook["trust"] == "unknown" and hook["source"] == ".claude/settings.json"
    trusted = run(["hooks", "--workspace", str(ws), "--trust", hook["id"]], home, tmp_path)
    assert trusted.stdout.strip() == f"{hook['id']}: trusted"

    (ws / "a.txt").unlink()
    second = run(chat, home, tmp_path)
    assert not (ws / "a.txt").exists()
    assert "hook says no" in second.stdout

    run(["hooks", "--workspace", str(ws), "--revoke", hook["id"]], home, tmp_path)
    text = run(["hooks", "--workspace", str(ws)], home, tmp_path).stdout
    assert f"{hook['id']}  unknown" in text and "PreToolUse(Write)" in text
    bad = run(["hooks", "--workspace", str(ws), "--trust", "hnope"], home, tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.startswith("openprogram-lsp: error: no workspace hook")


def test_hooks_of_the_users_claude_settings_block_and_are_listed_with_their_file(
        tmp_path: Path) -> None:
    """A Claude Code user's ~/.claude/settings.json (in a fake HOME) with Claude Code's example
    Bash validator: the chat's command is refused, and `hooks` names the file."""
    import shutil
    import sys

    home, ws, fake = tmp_path / "home", tmp_path / "ws", tmp_path / "fakehome"
    ws.mkdir()
    (fake / ".claude" / "hooks").mkdir(parents=True)
    script = fake / ".claude" / "hooks" / "bash_validator.py"
    shutil.copy(Path(__file__).parent / "data" / "claude" / "bash_validator.py", script)
    settings = fake / ".claude" / "settings.json"
    settings.write_text(json.dumps(on("PreToolUse", f"{sys.executable} {script}",
                                      matcher="Bash")))
    env = {"HOME": str(fake), "CLAUDE_CONFIG_DIR": ""}
    listed = run(["hooks", "--workspace", str(ws)], home, tmp_path, **env)
    assert f"PreToolUse(Bash)  {sys.executable} {script}  [{settings}]" in listed.stdout
    assert "user" not in listed.stderr
    chat = run(["chat", "--workspace", str(ws), "--permission-mode", "bypass", "--json",
                "run grep -r TODO . > found.txt"], home, tmp_path, **env)
    assert chat.returncode == 0, chat.stderr
    assert not (ws / "found.txt").exists()
    assert "Use 'rg' (ripgrep) instead of 'grep'" in chat.stdout
    ok = run(["chat", "--workspace", str(ws), "--permission-mode", "bypass", "--json",
              "run rg -n TODO . > found.txt; true"], home, tmp_path, **env)
    assert ok.returncode == 0 and (ws / "found.txt").exists()
