"""A session remembers its workspace: chat, history and checkpoints use it from anywhere."""

from __future__ import annotations

from pathlib import Path

from tests.terminal.cli import chat_json, one_error_line, run, sessions


def _session(tmp: Path, ws: Path) -> str:
    result = chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
                        "write README.md\nthe session's readme"], tmp)
    return str(result["sessionId"])


def test_chat_session_acts_on_the_sessions_workspace_not_the_current_directory(
        tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "clone"
    ws.mkdir()
    elsewhere.mkdir()
    (elsewhere / "README.md").write_text("the clone's readme\n")
    sid = _session(tmp_path, ws)
    r = run(["chat", "--session", sid, "read README.md"], tmp_path, cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    assert "the session's readme" in r.stdout and "clone" not in r.stdout
    r = run(["chat", "--session", sid, "--permission-mode", "accept-edits",
             "write notes.md\nhello"], tmp_path, cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    assert (ws / "notes.md").exists() and not (elsewhere / "notes.md").exists()


def test_a_different_workspace_is_refused_unless_forced(tmp_path: Path) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    sid = _session(tmp_path, ws)
    line = one_error_line(run(["chat", "--session", sid, "--workspace", str(other),
                               "list ."], tmp_path))
    assert f"belongs to workspace {ws}" in line and "--force-workspace" in line
    r = run(["chat", "--session", sid, "--workspace", str(other), "--force-workspace",
             "--permission-mode", "accept-edits", "write moved.md\nx"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (other / "moved.md").exists()
    r = run(["chat", "--session", sid, "--permission-mode", "accept-edits",
             "write after.md\ny"], tmp_path)  # the session now lives in `other`
    assert (other / "after.md").exists(), r.stderr


def test_history_and_sessions_show_and_filter_by_workspace(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    sid_a, sid_b = _session(tmp_path, a), _session(tmp_path, b)
    r = run(["history", sid_a], tmp_path)
    assert r.returncode == 0 and f"workspace {a}" in r.stdout
    assert [s["id"] for s in sessions(tmp_path)] == [sid_b, sid_a]
    only = run(["sessions", "--workspace", str(a), "--json"], tmp_path)
    assert [s["id"] for s in __import__("json").loads(only.stdout)] == [sid_a]


def test_write_on_one_line_puts_the_rest_in_the_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
               "write notes.md hello world"], tmp_path)
    assert (ws / "notes.md").read_text() == "hello world\n"
    chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
               "write 'my notes.md' two words"], tmp_path)
    assert (ws / "my notes.md").read_text() == "two words\n"
    assert not (ws / "notes.md hello world").exists()


def test_continue_takes_the_newest_session_of_this_workspace(tmp_path: Path) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    none = run(["chat", "--continue", "hi"], tmp_path, ws)
    assert f"no session to continue in {ws}" in one_error_line(none)
    first = chat_json(["list ."], tmp_path, ws)
    chat_json(["list ."], tmp_path, other)  # newer, but of another workspace
    again = chat_json(["--continue", "read x"], tmp_path, ws)
    assert again["sessionId"] == first["sessionId"]
    both = run(["chat", "--continue", "--session", str(first["sessionId"]), "hi"], tmp_path, ws)
    assert "--continue or --session" in one_error_line(both)


def test_an_empty_session_list_says_so(tmp_path: Path) -> None:
    r = run(["sessions"], tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("no sessions yet")


def test_compact_prints_one_readable_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = str(chat_json(["list ."], tmp_path, ws)["sessionId"])
    r = run(["chat", "--session", sid, "--compact"], tmp_path)
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stderr.splitlines() if "context compacted" in ln)
    assert line.startswith("[context compacted (manual): ") and " tokens of " in line
    assert "{" not in line and "tokens_before" not in line
