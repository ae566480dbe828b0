"""Sessions written by earlier versions of the store open, read and continue (real git
fixtures in each old layout, ``_legacy_session``), and a flat session is upgraded once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.store._legacy_session import LAYOUTS, loose_objects, write_legacy_session
from tests.store._session_helpers import uncommitted

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.store.git import run_git
from openprogram_lsp.store.index import SessionIndex
from openprogram_lsp.store.session_repo import wait_for_maintenance
from openprogram_lsp.store.session_store import SessionStore

SID = "s20261130old"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_old_session_reads_as_it_was(home: Path, workspace: Path, layout: str) -> None:
    old = write_legacy_session(home / "sessions", SID, layout, turns=3,
                               workspace=str(workspace))
    store = SessionStore(home)
    assert [n.id for n in store.get_branch(SID)] == old["chain"]
    page, more = store.page(SID, old["chain"][-1], limit=2)
    assert [n.id for n in page] == old["chain"][-2:] and more
    reply = store.get_node(SID, "a1")
    assert reply.tool_calls and reply.tool_calls[0].status == "completed"
    assert reply.metadata["checkpointId"] == "c0001old"
    for t in range(3):
        record = store.read_context_commit(SID, f"a{t}")
        assert record is not None and record["kept"] == old["chain"][:2 * t + 2]
        assert record["snipped"] == [] and "keptRanges" not in record
    assert store.checkpoint_refs(workspace) == set(old["checkpoints"])
    assert (old["root"] / ".git" / "openprogram-checkpoints").exists()  # made by that one scan
    assert [m["id"] for m in store.list_sessions(workspace=str(workspace))] == [SID]
    assert store.git_log(SID)[:2] == ["turn: user 2", "turn: user 1"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_old_session_continues_with_a_turn(
        make_dispatcher: Callable[..., Dispatcher], script: Callable[[list[object]], str],
        home: Path, workspace: Path, layout: str) -> None:
    old = write_legacy_session(home / "sessions", SID, layout, turns=3,
                               workspace=str(workspace), uncommitted=True)
    root: Path = old["root"]
    before = loose_objects(root)
    d = make_dispatcher(script([{"text": "continued."}]))
    result = d.process_user_turn(TurnRequest(text="go on", session_id=SID))
    assert result.status == "done"
    store = d.services.store
    branch = [n.id for n in store.get_branch(SID)]
    assert branch[:-2] == old["chain"] and len(branch) == len(old["chain"]) + 2
    new_reply = store.get_node(SID, result.assistant_node_id)
    assert new_reply.text == "continued." and new_reply.predecessor == branch[-2]
    # new nodes are sharded and their seqs follow the old ones
    name = store.index(SID).files[result.assistant_node_id]
    assert name.count("/") == 2 and int(name.rsplit("/", 1)[1][:7]) == old["seq"] + 2
    record = store.read_context_commit(SID, result.assistant_node_id)
    assert record is not None and record["kept"][-2:] == [old["chain"][-1], branch[-2]]
    assert (root / "nodes" / name.replace(".json", ".context.json")).exists()
    assert store.read_context_commit(SID, old["chain"][-1])["kept"] == old["chain"]  # type: ignore[index]
    # everything is committed, the old turn that never was included
    assert uncommitted(root) == b""
    subjects = store.git_log(SID, 10)
    assert subjects[0].startswith("turn: go on") and "turn: user 1" in subjects
    assert "turn: user 2" not in subjects  # it was never committed by the old process
    tracked = run_git(["ls-tree", "-r", "--name-only", "HEAD"], cwd=root).decode().split()
    assert any(p.endswith("-a2.json") for p in tracked)
    wait_for_maintenance()
    if layout == "flat":  # upgraded once: no stale git index, loose objects repacked
        assert not (root / ".git" / "index").exists()
        assert before > 0 and loose_objects(root) == 0
        assert len(list((root / ".git" / "objects" / "pack").glob("*.pack"))) == 1
    run_git(["fsck", "--strict", "--no-dangling"], cwd=root)
    # another process reads the same thing from disk
    fresh = SessionStore(home)
    assert [n.id for n in fresh.get_branch(SID)] == branch
    assert SessionIndex.load(root).snapshot() == store.index(SID).snapshot()
    # and a second turn is an ordinary one
    d2 = make_dispatcher(script([{"text": "again."}]))
    assert d2.process_user_turn(TurnRequest(text="more", session_id=SID)).status == "done"
    assert uncommitted(root) == b"" and not (root / ".git" / "index").exists()
