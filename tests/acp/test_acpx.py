"""Our agent driven by acpx, the npm ACP client (a client nobody here wrote), as a subprocess."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.core.transcript import without_environment
from openprogram_lsp.core.types import Node
from openprogram_lsp.store.session_store import SessionStore
from tests.acp.acpx import methods, queue_socket_dir, run_acpx, start_acpx, updates
from tests.imagefiles import png
from tests.providers.loopback import LoopbackServer, Reply
from tests.providers.wire import AnthropicStream


@pytest.fixture(autouse=True)
def _no_queue_dirs_left(home: Path) -> Iterator[None]:
    """acpx's per-HOME socket directory in /tmp goes with the test's HOME."""
    yield
    shutil.rmtree(queue_socket_dir(home), ignore_errors=True)


def test_edit_approved_is_written_and_checkpointed(home: Path, workspace: Path) -> None:
    # the real command line, exec'd by acpx (the other tests fork it: tests/forkclient.py)
    code, frames, err = run_acpx(["--approve-all", "exec", "write a.txt\nhello"],
                                 cwd=workspace, home=home, exec_agent=True)
    assert code == 0, err
    assert (workspace / "a.txt").read_text() == "hello\n"
    names = methods(frames)
    assert names.index("session/request_permission") > names.index("session/update")
    started = updates(frames, "tool_call")[0]
    assert started["status"] == "pending"
    assert started["content"][0]["type"] == "diff"
    assert [u["status"] for u in updates(frames, "tool_call_update")] == ["in_progress",
                                                                         "completed"]
    events = [f["params"] for f in frames if f.get("method") == "_openprogram/event"]
    assert [e["type"] for e in events] == ["checkpoint.created"]
    result = next(f["result"] for f in frames if f.get("id") == 2 and "result" in f)
    assert result["stopReason"] == "end_turn"
    assert updates(frames, "agent_message_chunk")


def test_edit_rejected_leaves_nothing(home: Path, workspace: Path) -> None:
    _code, frames, _err = run_acpx(["--deny-all", "exec", "write a.txt\nhello"],
                                 cwd=workspace, home=home)
    assert not (workspace / "a.txt").exists()
    assert updates(frames, "tool_call_update")[-1]["status"] == "failed"


def test_a_client_without_fs_or_terminal_never_gets_those_calls(home: Path,
                                                                workspace: Path) -> None:
    (workspace / "b.txt").write_text("from disk\n")
    code, frames, err = run_acpx(["--approve-all", "--no-fs", "--no-terminal", "exec",
                                  "read b.txt"], cwd=workspace, home=home)
    assert code == 0, err
    init = next(f for f in frames if f.get("method") == "initialize")
    assert init["params"]["clientCapabilities"].get("terminal") is False
    sent = methods(frames)
    assert not [m for m in sent if m.startswith(("fs/", "terminal/"))]
    done = updates(frames, "tool_call_update")[-1]
    assert done["status"] == "completed" and "from disk" in done["rawOutput"]["output"]


def test_sessions_are_stored_with_their_first_message_listed_and_resumed(
        home: Path, workspace: Path) -> None:
    code, frames, err = run_acpx(["sessions", "new"], cwd=workspace, home=home)
    assert code == 0, err
    assert not list((home / "sessions").glob("s*"))  # an empty session is not stored
    code, frames, err = run_acpx(["--approve-all", "prompt", "write c.txt\nthree"],
                                 cwd=workspace, home=home)
    assert code == 0, err
    assert (workspace / "c.txt").read_text() == "three\n"
    [first] = {f["params"]["sessionId"] for f in frames if f.get("method") == "session/prompt"}
    code, frames, err = run_acpx(["--approve-all", "prompt", "write d.txt\nfour"],
                                 cwd=workspace, home=home)
    assert code == 0, err
    sent = methods(frames)
    # the stored session again: resumed by a new queue owner, or still open in the old one
    # (acpx keeps it for its --ttl after a command, so which one depends on timing)
    assert "session/new" not in sent
    assert {f["params"]["sessionId"] for f in frames if f.get("method") == "session/prompt"} \
        == {first}
    code, frames, err = run_acpx(["sessions", "list"], cwd=workspace, home=home)
    assert code == 0, err
    listed = next(f for f in frames if f.get("source") == "agent")["sessions"]
    assert [s["title"] for s in listed] == ["write c.txt"]


def test_cancel_stops_a_running_command_within_a_second(home: Path, workspace: Path,
                                                       tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    agent_args = f"--permission-mode bypass --log-file {log}"
    code, _frames, err = run_acpx(["sessions", "new"], cwd=workspace, home=home,
                                  agent_args=agent_args)
    assert code == 0, err
    out = tmp_path / "prompt.out"
    prompt = start_acpx(["--approve-all", "prompt", "run sleep 30"], cwd=workspace, home=home,
                        agent_args=agent_args, out=out)
    try:
        for _ in range(1200):  # until the command runs (bounded: 120 s)
            if '"status":"in_progress"' in out.read_text(errors="replace"):
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the command never started:\n{out.read_text()[-2000:]}")
        code, _frames, err = run_acpx(["cancel"], cwd=workspace, home=home,
                                      agent_args=agent_args)
        assert code == 0, err
        prompt.wait(60)
    finally:
        if prompt.poll() is None:
            prompt.kill()
    frames = [json.loads(line) for line in out.read_text().splitlines()
              if line.startswith("{")]
    assert any(f.get("result", {}).get("stopReason") == "cancelled" for f in frames)
    stamps = {}
    for line in log.read_text().splitlines():  # agent side: cancel in -> prompt answered
        for key in ("session/cancel for", "answers cancelled"):
            if key in line:
                stamps[key] = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
    assert (stamps["answers cancelled"] - stamps["session/cancel for"]).total_seconds() < 1.0


def test_the_documented_config_sets_model_and_mode_and_lists_by_cwd(
        home: Path, workspace: Path) -> None:
    """docs/acp.md's acpx block as written: a named agent in ~/.acpx/config.json."""
    def acpx(*args: str) -> list[dict[str, object]]:
        code, frames, err = run_acpx(["--approve-all", *args], cwd=workspace, home=home,
                                     named=True)
        assert code == 0, err
        return frames

    acpx("sessions", "new")
    first = acpx("list .")
    sid = next(f["result"]["sessionId"] for f in first
               if isinstance(f.get("result"), dict) and "sessionId" in f["result"])
    acpx("set", "model", "offline")
    acpx("set-mode", "plan")
    assert SessionStore(home).meta(sid)["settings"] == {"mode": "plan", "model": "offline"}
    frames = acpx("write x.txt\nhi")
    assert "session/resume" in methods(frames)
    assert not (workspace / "x.txt").exists()  # the stored plan mode refused the edit
    listed = next(f for f in acpx("sessions", "list", "--filter-cwd", str(workspace))
                  if f.get("source") == "agent")["sessions"]
    assert [s["sessionId"] for s in listed] == [sid]


def test_sessions_list_pages_with_the_agent_s_cursor(home: Path, workspace: Path) -> None:
    store = SessionStore(home)
    for i in range(52):  # sessions with a message, as any front end stores them
        sid = store.create_session(workspace=str(workspace.resolve()), title=f"t{i}")
        store.append(sid, Node(id=f"u{i}", role="user", text="hi"), advance_head=True)

    def page(*cursor: str) -> dict[str, Any]:
        code, frames, err = run_acpx(["sessions", "list", *cursor], cwd=workspace, home=home)
        assert code == 0, err
        return next(f for f in frames if f.get("source") == "agent")

    first = page()
    assert len(first["sessions"]) == 50 and first["nextCursor"]
    rest = page("--cursor", first["nextCursor"])
    assert len(rest["sessions"]) == 2 and rest.get("nextCursor") is None
    seen = [s["sessionId"] for s in first["sessions"] + rest["sessions"]]
    assert sorted(seen) == sorted(s["id"] for s in store.list_sessions())


def test_sessions_close_reaches_the_agent_of_a_live_session(home: Path, workspace: Path,
                                                            tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    agent_args = f"--log-file {log}"
    code, _frames, err = run_acpx(["sessions", "new"], cwd=workspace, home=home,
                                  agent_args=agent_args)
    assert code == 0, err
    code, frames, err = run_acpx(["--approve-all", "prompt", "list ."], cwd=workspace,
                                 home=home, agent_args=agent_args, ttl=60)  # stays alive
    assert code == 0, err
    sid = next(f["params"]["sessionId"] for f in frames if f.get("method") == "session/prompt")
    code, _frames, err = run_acpx(["sessions", "close"], cwd=workspace, home=home,
                                  agent_args=agent_args)
    assert code == 0, err
    assert f"session/close for {sid}" in log.read_text()
    assert SessionStore(home).exists(sid)  # closed, not deleted


def test_an_image_prompt_reaches_the_model_as_an_image(home: Path, workspace: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    server = LoopbackServer().start()
    try:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-loopback")
        server.queue(Reply(chunks=AnthropicStream(text=["A grey gradient."]).events()))
        shot = base64.b64encode(png(16, 9, seed=7)).decode()
        # acpx sends a prompt file holding a JSON array of content blocks as those blocks
        (workspace / "prompt.json").write_text(json.dumps([
            {"type": "text", "text": "what is in this screenshot?"},
            {"type": "image", "mimeType": "image/png", "data": shot}]))
        code, frames, err = run_acpx(["--approve-all", "exec", "--file", "prompt.json"],
                                     cwd=workspace, home=home,
                                     agent_args="--model anthropic:claude-test")
    finally:
        server.stop()
    assert code == 0, err
    init = next(f["result"] for f in frames if f.get("id") == 0 and "result" in f)
    assert init["agentCapabilities"]["promptCapabilities"]["image"] is True
    sent = next(f["params"]["prompt"] for f in frames if f.get("method") == "session/prompt")
    assert [b["type"] for b in sent] == ["text", "image"]
    [request] = server.received
    content = request.json["messages"][0]["content"]
    assert content[0] == {"type": "image", "source": {"type": "base64",
                                                      "media_type": "image/png", "data": shot}}
    assert without_environment(content[1]["text"]) == (
        '<context>\n<image path="image-2" type="image/png" pixels="16x9"/>\n</context>\n\n'
        "what is in this screenshot?")
    assert "A grey gradient." in "".join(u["content"]["text"]
                                         for u in updates(frames, "agent_message_chunk"))
    assert [p.name for p in (home / "images").glob("??/*")] == [
        hashlib.sha256(base64.b64decode(shot)).hexdigest()]  # stored once, by content
