"""Turns hold their session across processes: a busy one refuses, sequence numbers stay unique."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from openprogram_lsp.core.errors import SessionBusy
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher

HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from openprogram_lsp.store.session_store import SessionStore
    store = SessionStore(Path(sys.argv[1]))
    store.turn_lock(sys.argv[2]).acquire("turn in another process")
    print("ready", flush=True)
    time.sleep(60)
""")


def _hold(home: Path, sid: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(home), sid],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def test_a_turn_in_a_session_busy_in_another_process_is_refused(
        make_dispatcher: Callable[..., Dispatcher], home: Path) -> None:
    d = make_dispatcher()
    first = d.process_user_turn(TurnRequest(text="hello"))
    nodes_before = len(d.services.store.nodes(first.session_id))
    proc = _hold(home, first.session_id)
    try:
        with pytest.raises(SessionBusy) as info:
            d.process_user_turn(TurnRequest(text="again", session_id=first.session_id))
        assert info.value.code == -32002
        assert "session is busy in another process" in info.value.message
        assert f"pid {proc.pid}" in info.value.message
        assert len(d.services.store.nodes(first.session_id)) == nodes_before  # nothing forked
    finally:
        proc.kill()
        proc.wait(10)
    # the holder was killed: its lock is gone and the session takes turns again
    again = d.process_user_turn(TurnRequest(text="after", session_id=first.session_id))
    assert again.status == "done"


RACER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from openprogram_lsp.app import AppConfig, build_dispatcher
    from openprogram_lsp.core.errors import SessionBusy
    from openprogram_lsp.core.types import TurnRequest
    d = build_dispatcher(AppConfig(workspace=Path(sys.argv[2]), home=Path(sys.argv[1])))
    print("ready", flush=True)
    sys.stdin.readline()
    done = busy = 0
    for _ in range(int(sys.argv[4])):
        try:
            d.process_user_turn(TurnRequest(text="list .", session_id=sys.argv[3]))
            done += 1
        except SessionBusy:
            busy += 1
    print(json.dumps({"done": done, "busy": busy}), flush=True)
""")


def test_racing_processes_never_fork_the_session_or_reuse_a_sequence_number(
        make_dispatcher: Callable[..., Dispatcher], home: Path, workspace: Path) -> None:
    d = make_dispatcher()
    sid = d.process_user_turn(TurnRequest(text="start")).session_id
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", RACER, str(home), str(workspace), sid, "4"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    results = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        results.append(json.loads(out.strip().splitlines()[-1]))
    done = sum(r["done"] for r in results)
    assert done + sum(r["busy"] for r in results) == 8 and done >= 4
    names = sorted(p.name for p in (home / "sessions" / sid / "nodes").rglob("*.json")
                   if not p.name.endswith(".context.json"))
    seqs = [n.split("-", 1)[0] for n in names]
    assert len(seqs) == len(set(seqs)), "a sequence number was used twice"
    index = d.services.store.rebuild_index(sid)
    users = [n for n in index.nodes.values() if n.role == "user"]
    assert len(users) == 1 + done  # refused turns wrote nothing
    # one linear branch: every user node after the first follows the previous reply
    roots = [n for n in index.nodes.values() if n.predecessor is None and n.caller is None]
    assert len(roots) == 1
    assert len(d.services.store.list_branches(sid)) == 1
