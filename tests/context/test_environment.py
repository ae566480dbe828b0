"""The environment note: date, git branch and working-tree state (no git process), top level;
stored on the user node when it changed, rendered after the message, the system prompt left
the same from turn to turn (the cached prefix)."""

from __future__ import annotations

import datetime
import itertools
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.providers.loopback import LoopbackServer, Reply
from tests.providers.wire import OpenAIStream

from openprogram_lsp.config import load_settings
from openprogram_lsp.context.environment import environment_note
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.providers.http import aclose_shared_client

DAY = datetime.date(2026, 12, 7)


def git(ws: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=ws,
                   check=True, capture_output=True)


@pytest.fixture
def repo(workspace: Path) -> Path:
    (workspace / "README.md").write_text("hi\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print(1)\n")
    git(workspace, "init", "-q", "-b", "trunk")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "first")
    return workspace


def test_a_clean_repository(repo: Path) -> None:
    assert environment_note(repo, DAY) == (
        "<environment>\nDate: 2026-12-07\nGit: branch trunk; no tracked file changed\n"
        "Top level of the workspace: README.md, src/\n</environment>")


def test_changed_and_deleted_files_are_counted(repo: Path) -> None:
    (repo / "README.md").write_text("hi there\n")
    (repo / "src" / "app.py").unlink()
    (repo / "new.txt").write_text("untracked\n")
    assert "Git: branch trunk; 2 tracked files changed since the index" in environment_note(
        repo, DAY)


def test_detached_head_subdirectory_and_no_repository(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    assert "Git: detached HEAD at " in environment_note(repo / "src", DAY)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "Git: not a git repository" in environment_note(plain, DAY)
    assert "Top level of the workspace: (empty)" in environment_note(plain, DAY)


def test_a_hostile_git_config_runs_nothing(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    (repo / ".gitattributes").write_text("* filter=evil\n")
    git(repo, "config", "filter.evil.clean", f"touch {marker}; cat")
    (repo / "README.md").write_text("changed\n")
    assert "1 tracked file changed" in environment_note(repo, DAY)
    assert not marker.exists()


def test_a_long_top_level_is_cut(tmp_path: Path) -> None:
    ws = tmp_path / "many"
    ws.mkdir()
    for n in range(45):
        (ws / f"f{n:02d}").write_text("")
    assert "f39 (and 5 more)" in environment_note(ws, DAY)



def test_the_top_level_is_listed_again_once_it_changes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("")
    settled = time.time_ns() - 10 * 10**9
    os.utime(ws, ns=(settled, settled))  # old enough to be kept
    assert "Top level of the workspace: a.txt" in environment_note(ws, DAY)
    (ws / "a.txt").rename(ws / "b")
    (ws / "c").mkdir()
    assert "Top level of the workspace: b, c/" in environment_note(ws, DAY)
    (ws / "c").rmdir()  # within the same instant as the listing: the next look lists again
    assert "Top level of the workspace: b\n" in environment_note(ws, DAY) + "\n"

@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    srv = LoopbackServer().start()
    yield srv
    srv.stop()


async def test_turns_carry_the_note_when_it_changes_and_keep_the_system_prompt(
        repo: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch,
        make_dispatcher: Callable[..., Dispatcher]) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.queue(*(Reply(chunks=OpenAIStream(text=[f"ok {n}"]).events()) for n in range(3)))
    d = make_dispatcher("openai:gpt-test", settings=load_settings(user_file=False))
    try:
        first = await d.run_turn(TurnRequest(text="one", workspace=str(repo)))
        await d.run_turn(TurnRequest(text="two", session_id=first.session_id,
                                     workspace=str(repo)))
        (repo / "README.md").write_text("edited\n")
        await d.run_turn(TurnRequest(text="three", session_id=first.session_id,
                                     workspace=str(repo)))
    finally:
        await aclose_shared_client()
    bodies = [r.json["messages"] for r in server.received]
    assert [b[0] for b in bodies] == [bodies[0][0]] * 3  # the system prompt never changes
    assert bodies[0][0]["content"].startswith("You are openprogram")
    one, two, three = bodies[0][-1], bodies[1][-1], bodies[2][-1]
    assert one["content"].startswith("one\n\n<environment>\n")
    assert "no tracked file changed" in one["content"]
    assert two["content"] == "two"  # nothing changed: not repeated
    assert "1 tracked file changed" in three["content"]
    for prev, cur in itertools.pairwise(bodies):  # each extends the one before
        assert cur[:len(prev)] == prev
