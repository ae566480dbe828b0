"""``kill -9`` of a process at each of a write turn's session-store writes (node files, the
meta's slots, torn mid-write, the session commit): the process that had the session open and
a fresh one both read the user message (once the turn was on the branch) and a turn that is
over, interrupted or done, never running, never a torn meta.

Each case forks the test process (no interpreter start-up) and kills the child from inside
the write it is cut at, so the cut is exactly there."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.store import meta_slots, session_repo
from openprogram_lsp.store.session_store import SessionStore

# (what, n): cut after the n-th node or ContextCommit file a turn writes (1 user, 2 reply with
# its call running: the running reply's first file, 3 tool node, 4 final reply, 5
# ContextCommit), in the middle of the n-th meta write (1 the turn's start, which also holds
# the running reply, 2 its end) or right after it, or at the session commit (objects
# written, ref not moved; ref moved, journal not marked)
POINTS = [("file", 1), ("meta-torn", 1), ("meta", 1), ("file", 2), ("file", 3), ("file", 4),
          ("file", 5), ("meta-torn", 2), ("meta", 2), ("commit", 0), ("commit", 1)]
ON_BRANCH = {("meta", 1), ("file", 2), ("file", 3), ("file", 4), ("file", 5),
             ("meta-torn", 2), ("meta", 2), ("commit", 0), ("commit", 1)}
"""Cuts after the meta that puts the turn on the branch (the prompt is acknowledged then)."""


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _cut_at(what: str, n: int) -> None:
    """Arrange (in the child) to be killed at the point."""
    count = [0]

    def wrap(owner: Any, name: str, at: int, before: bool = False) -> None:
        real = getattr(owner, name)

        def cut(*args: Any, **kwargs: Any) -> Any:
            count[0] += 1
            if before and count[0] == at:
                _die()
            out = real(*args, **kwargs)
            if count[0] == at:
                _die()
            return out

        setattr(owner, name, cut)

    if what == "file":
        wrap(session_repo, "replace_file", n)
    elif what == "meta":
        wrap(meta_slots.MetaWriter, "write", n)
    elif what == "meta-torn":
        real_pwrite = os.pwrite

        def torn(fd: int, data: bytes, offset: int) -> int:
            if data[:4] == meta_slots.MAGIC:
                count[0] += 1
                if count[0] == n:
                    real_pwrite(fd, data[:len(data) // 2], offset)
                    _die()
            return real_pwrite(fd, data, offset)

        os.pwrite = torn
    else:  # commit: 0 before the ref moves, 1 after it (before the journal's mark)
        wrap(session_repo.SessionRepo, "_set_head", 1, before=n == 0)


@pytest.fixture
def session(make_dispatcher: Callable[..., Dispatcher]) -> Iterator[tuple[Dispatcher, str]]:
    d = make_dispatcher("offline", permission_mode="bypass")
    sid = d.process_user_turn(TurnRequest(text="write f.txt version 0")).session_id
    d.process_user_turn(TurnRequest(text="write f.txt version 1", session_id=sid))
    yield d, sid


@pytest.mark.parametrize(("what", "n"), POINTS)
def test_a_turn_killed_at_each_store_write_reads_back_whole(
        session: tuple[Dispatcher, str], home: Path, what: str, n: int) -> None:
    d, sid = session
    store = d.services.store
    before = [x.id for x in store.get_branch(sid)]  # this process has the session open
    pid = os.fork()
    if pid == 0:  # the child: a turn, cut at the point
        try:
            _cut_at(what, n)
            d.process_user_turn(TurnRequest(text="write f.txt version 2", session_id=sid))
        finally:
            os._exit(3)  # not reached when the cut happened
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the child's turn did not finish in 30 s")
        time.sleep(0.005)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, \
        f"the turn ended without reaching the cut ({status})"
    root = store.session_dir(sid)
    assert meta_slots.newest(Path(meta_slots.slots_path(root)).read_bytes()) is not None
    for reader in (store, SessionStore(home)):  # this process, then a fresh one
        branch = reader.get_branch(sid)
        ids = [x.id for x in branch]
        meta = reader.meta(sid)
        assert not meta.get("running") and meta["status"] == "idle"
        assert all(x.status != "running" for x in reader.nodes(sid))
        [listed] = [m for m in reader.list_sessions() if m["id"] == sid]
        assert listed["status"] == "idle"
        if (what, n) in ON_BRANCH:
            user, reply = branch[-2:]
            assert ids[:-2] == before and user.text == "write f.txt version 2"
            assert reply.status in ("interrupted", "done")
            if (what == "file" and n < 4) or (what == "meta" and n == 1):
                assert reply.status == "interrupted"
            assert (root / "nodes" / reader.index(sid).files[reply.id]).is_file()
        else:
            assert ids == before  # cut before the prompt was acknowledged: off the branch
            [off] = [x for x in reader.nodes(sid) if x.text.startswith("write f.txt version 2")]
            # its reply was never written: it went into the meta write the cut tore or stopped
            assert not [x for x in reader.nodes(sid) if x.predecessor == off.id]
    # a turn after the cut takes over whatever it left, and commits everything
    d.process_user_turn(TurnRequest(text="write f.txt version 3", session_id=sid))
    assert [x.text for x in store.get_branch(sid)][-2] == "write f.txt version 3"
    assert SessionStore(home).meta(sid)["status"] == "idle"
