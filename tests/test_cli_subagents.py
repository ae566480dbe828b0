"""The one-shot chat command waits for the children it started (a real subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

from openprogram_lsp.store.session_store import SessionStore
from tests.test_cli import run


def test_chat_waits_for_its_child_and_the_follow_up(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    # parent and child share the script: the responses that may race are identical
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "agent", "arguments": {"prompt": "help", "label": "kid"}}]},
        {"text": "ok"}, {"text": "ok"}, {"text": "ok"}]))
    r = run(["chat", "--workspace", str(ws), "--permission-mode", "bypass", "--json",
             "--model", f"scripted:{script}", "delegate"], home, tmp_path)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    types = [x["type"] for x in lines]
    assert "subagent.started" in types and "subagent.ended" in types
    assert lines[-1]["type"] == "result"
    sid = lines[-1]["data"]["sessionId"]
    store = SessionStore(home)
    tip = store.find_branch(sid, "kid")
    assert tip is not None and store.get_node(sid, tip).status == "done"
    head = store.head(sid)
    assert head is not None
    sources = [n.metadata.get("source") for n in store.get_branch(sid, head)]
    # the child's report came back inside the parent's turn or as a follow-up turn after it
    assert sources in (["cli", "cli"], ["cli", "cli", "follow_up", "follow_up"])
    assert any(n.metadata.get("kind") == "attach" for n in store.nodes(sid))
    assert store.get_node(sid, head).status == "done"
