"""The checkpoint ref written in place: no lock file or rename on a turn, git still reads it,
a torn read is read again under the store's lock, and a kill at the write leaves a ref naming
a whole commit (the old one or the new one)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.store._cp_helpers import make_workspace, open_store

from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.checkpoints.shadow import HEAD_REF, ShadowRepo


def _turn(store: CheckpointStore, ws: Path, n: int) -> str:
    (ws / "a.txt").write_text(f"version {n}\n")
    store.note_paths(["a.txt"])
    cp = store.commit_turn("s", f"t{n}", f"turn {n}")
    assert cp is not None
    return cp.id


def _git(store: CheckpointStore, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(store.repo.git_dir), *args], check=True,
                          capture_output=True, text=True,
                          env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1",
                               "GIT_CONFIG_GLOBAL": os.devnull}).stdout


def test_a_turn_moves_the_ref_in_place_and_git_reads_it(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    ref = store.repo.git_dir / HEAD_REF
    inode = ref.stat().st_ino
    made: list[str] = []
    real_open = os.open

    def watched(path: str | os.PathLike[str], flags: int, *a: int, **k: object) -> int:
        if flags & os.O_CREAT and str(path).endswith(".lock"):
            made.append(str(path))
        return real_open(path, flags, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", watched)
    ids = [_turn(store, ws, n) for n in range(3)]
    monkeypatch.undo()
    assert made == []  # no checkpoints.lock created
    assert ref.stat().st_ino == inode  # the same file, written over
    head = store.repo.head()
    assert head is not None and ref.read_bytes() == f"{head}\n".encode()
    # git's own tools read it: the log of the ref, newest first
    assert _git(store, "log", "--format=%s", "checkpoints").splitlines()[:3] == \
        [f"turn: session s, turn t{n}" for n in (2, 1, 0)]
    assert [c.id for c in store.list()][:3] == ids[::-1]


def test_a_packed_ref_goes_through_the_lock_file(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    first = _turn(store, ws, 0)
    _git(store, "pack-refs", "--all")  # a git run by hand: the loose ref is gone
    assert not (store.repo.git_dir / HEAD_REF).exists()
    second = _turn(store, ws, 1)
    assert (store.repo.git_dir / HEAD_REF).exists()
    assert not (store.repo.git_dir / (HEAD_REF + ".lock")).exists()
    assert [c.id for c in store.list()][:2] == [second, first]
    assert store.restore(first).restored == ["a.txt"]
    assert (ws / "a.txt").read_text() == "version 0\n"


def test_a_torn_read_is_read_again_under_the_lock(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    old = store.repo.head()
    _turn(store, ws, 0)
    new = store.repo.head()
    assert old is not None and new is not None
    torn = new[:20] + old[20:]  # what a read racing the in-place write could see
    held: list[bool] = []
    real = ShadowRepo.head

    def head(repo: ShadowRepo) -> str | None:
        if not held:
            held.append(store.lock.held_here())
            return torn
        held.append(store.lock.held_here())
        return real(repo)

    monkeypatch.setattr(ShadowRepo, "head", head)
    assert store.head() == new
    assert held == [False, True]
    monkeypatch.undo()
    assert store.head() == new  # a whole read is taken as it is


_CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from openprogram_lsp.store.checkpoints import CheckpointConfig, CheckpointStore

    ws, home, when = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    store = CheckpointStore(ws, home=home, config=CheckpointConfig())
    real = os.pwrite

    def pwrite(fd, data, offset):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("refs/heads/checkpoints"):
            if when == "before":
                os.kill(os.getpid(), signal.SIGKILL)
            real(fd, data, offset)
            os.kill(os.getpid(), signal.SIGKILL)
        return real(fd, data, offset)

    os.pwrite = pwrite
    (ws / "a.txt").write_text("killed turn\\n")
    store.note_paths(["a.txt"])
    store.commit_turn("s", "t9", "the killed turn")
    sys.exit(3)  # not reached: the ref write kills the process
""")


@pytest.mark.parametrize("when", ["before", "after"])
def test_kill_9_at_the_ref_write_leaves_a_whole_commit(tmp_path: Path, when: str) -> None:
    ws = make_workspace(tmp_path, git=False)
    home = tmp_path / "home"
    store = open_store(ws, home)
    base = store.ensure_baseline("s")
    assert base is not None
    first = _turn(store, ws, 0)
    old = store.repo.head()
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(ws), str(home), when],
                          capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    after = open_store(ws, home)
    head = after.repo.head()
    assert head is not None and after.repo.odb.has(head)
    assert (head == old) == (when == "before")
    listed = [c.message for c in after.list()]
    assert ("the killed turn" in listed) == (when == "after")
    # the store goes on: the next turn is recorded (the killed turn's edit with it, if its
    # checkpoint was lost) and every earlier checkpoint still restores
    (ws / "b.txt").write_text("next\n")
    after.note_paths(["b.txt"])
    nxt = after.commit_turn("s", "t10", "next turn")
    assert nxt is not None and "b.txt" in {f.path for f in nxt.files}
    assert after.restore(first).restored
    assert (ws / "a.txt").read_text() == "version 0\n"
    after.restore(base.id)
    assert not (ws / "a.txt").exists()
    assert _git(after, "log", "--format=%s", "checkpoints").splitlines()[0].startswith("restore")


def test_a_repository_a_killed_process_was_making_is_never_taken_for_one(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    git = store.repo.git_dir
    git.mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/checkpoints\n")  # killed in the middle of init
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    left = store.root / f".git-new-{dead.pid}-00000000"  # killed before its rename
    (left / "refs").mkdir(parents=True)
    (left / "config.lock").write_text("")
    assert store.repo.ensure() is False
    assert not left.exists()
    assert [p.name.split("-")[0] for p in store.root.glob("git.broken-*")] == ["git.broken"]
    _turn(store, ws, 1)
    _git(store, "fsck", "--no-progress")
    assert store.repo.ensure() is True


def test_makers_racing_in_threads_and_processes_share_one_repository(tmp_path: Path) -> None:
    # the first walk makes it on a thread of its own while a turn (or another process) may too:
    # none may move aside the one another has just made (its objects would go with it)
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    code = ("import sys; from pathlib import Path; "
            "from openprogram_lsp.store.checkpoints.config import CheckpointConfig; "
            "from openprogram_lsp.store.checkpoints.shadow import ShadowRepo; "
            "ShadowRepo(Path(sys.argv[1]), Path(sys.argv[2]), CheckpointConfig()).ensure()")
    others = [subprocess.Popen([sys.executable, "-c", code, str(ws), str(store.root)])
              for _ in range(3)]
    barrier = threading.Barrier(6)

    def make() -> bool:
        repo = ShadowRepo(ws, store.root, store.repo.config)
        barrier.wait(timeout=30)
        return repo.ensure()

    with ThreadPoolExecutor(6) as pool:
        made = list(pool.map(lambda _: make(), range(6)))
    assert all(p.wait(timeout=60) == 0 for p in others)
    assert made.count(False) <= 1  # at most one of the threads made it (or a process did)
    assert list(store.root.glob("git.broken-*")) == [] and list(store.root.glob(".git-new-*")) == []
    _turn(store, ws, 1)
    _git(store, "fsck", "--no-progress")
