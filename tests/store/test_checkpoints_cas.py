"""Restores never overwrite an edit another process made after the safety checkpoint (real git).

The racing edits land right after the safety checkpoint is taken, so it cannot hold them: only
the compare-and-swap keeps them.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tests.store._cp_helpers import make_workspace, open_store

from openprogram_lsp.store.checkpoints import cas
from openprogram_lsp.store.checkpoints.objects import blob_id


def _turn(store, ws: Path, tid: str, path: str, data: str) -> str:  # type: ignore[no-untyped-def]
    (ws / path).write_text(data)
    store.note_paths([path])
    cp = store.commit_turn("s", tid, tid)
    assert cp is not None
    return str(cp.id)


def test_files_changed_after_the_safety_checkpoint_are_kept(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    first = _turn(store, ws, "t1", "src/main.py", "one\n")
    _turn(store, ws, "t2", "src/main.py", "two\n")
    _turn(store, ws, "t3", "src/util.py", "util two\n")
    commit = store._commit

    def racing(kind: str, *args: object, **kwargs: object) -> object:
        out = commit(kind, *args, **kwargs)  # type: ignore[arg-type]
        if kind == "safety":  # another process writes right after the safety checkpoint
            (ws / "src" / "main.py").write_text("racer\n")
            (ws / "src" / "util.py").unlink()
        return out

    store._commit = racing  # type: ignore[method-assign]
    out = store.restore(first)
    store._commit = commit  # type: ignore[method-assign]
    assert sorted(out.conflicts) == ["src/main.py"]
    assert (ws / "src" / "main.py").read_text() == "racer\n"
    # util.py was deleted by the racer and the restore wants it back: nothing is lost by
    # writing it, so it is restored
    assert (ws / "src" / "util.py").read_text() == "def f():\n    return 1\n"
    assert not [p for p in (ws / "src").iterdir() if "openprogram" in p.name]
    # the racer's edit is recorded by the restore's own checkpoint
    assert out.checkpoint_id
    diff = store.diff(out.checkpoint_id, "src/main.py")
    assert diff.files[0].after == "racer\n"


def test_a_write_pending_on_a_truncated_file_lands_in_the_file_the_user_sees(
        tmp_path: Path) -> None:
    """An editor mid-save (the file truncated, its write not yet made) when the restore runs:
    the safety checkpoint sees an empty file, so hashes alone would let the restore remove the
    inode the pending write goes to."""
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    a = _turn(store, ws, "t1", "src/main.py", "branch a\n")
    _turn(store, ws, "t2", "src/main.py", "branch b\n")
    with open(ws / "src" / "main.py", "w") as pending:  # truncates now, writes later
        out = store.restore(a)
        pending.write("saved by the editor\n")
    assert (ws / "src" / "main.py").read_text() == "saved by the editor\n"
    assert out.conflicts == ["src/main.py"]
    assert not [p for p in (ws / "src").iterdir() if "openprogram" in p.name]


def test_swap_refuses_a_changed_file_and_a_created_one(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"theirs\n")
    expect = ("100644", blob_id(b"ours\n"))
    try:
        cas.swap(tmp_path, "a", expect, ("100644", b"restored\n"), 0o644)
    except cas.Conflict:
        pass
    else:
        raise AssertionError("a changed file was overwritten")
    assert (tmp_path / "a").read_bytes() == b"theirs\n"
    try:  # expected absent, but another process created it
        cas.swap(tmp_path, "a", None, ("100644", b"restored\n"), 0o644)
    except cas.Conflict:
        pass
    else:
        raise AssertionError("a created file was overwritten")
    assert (tmp_path / "a").read_bytes() == b"theirs\n"
    cas.swap(tmp_path, "a", ("100644", blob_id(b"theirs\n")), ("100644", b"new\n"), 0o600)
    assert (tmp_path / "a").read_bytes() == b"new\n"
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o600
    cas.swap(tmp_path, "a", ("100644", blob_id(b"new\n")), None, 0)
    assert not (tmp_path / "a").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_writer_racing_many_restores_keeps_its_last_edit(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    store.ensure_baseline("s")
    a = _turn(store, ws, "t1", "src/main.py", "branch a\n")
    b = _turn(store, ws, "t2", "src/main.py", "branch b\n")
    stop = threading.Event()
    last: list[str] = []

    def racer() -> None:
        for n in range(400):
            if stop.is_set():
                break
            value = f"racer {n}\n"
            (ws / "src" / "main.py").write_text(value)  # in place, as editors often do
            last.append(value)

    thread = threading.Thread(target=racer)
    thread.start()
    conflicts = 0
    try:
        for n in range(20):
            conflicts += len(store.restore(a if n % 2 else b).conflicts or [])
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    final = (ws / "src" / "main.py").read_text()
    store.note_paths(["src/main.py"])
    store.commit_turn("s", "end", "end")
    # the racer's last write is on disk, or a restore saw it (in a safety checkpoint) first
    seen = {f.after for c in store.list() for f in store.diff(c.id).files}
    assert final == last[-1] or last[-1] in seen
    assert not [p for p in (ws / "src").iterdir() if p.name.endswith(".tmp")]
    # when the racer recreated the file while a restore had it aside, both versions are
    # kept (never lost): each such copy belongs to a reported conflict and holds a racer write
    kept = [p for p in (ws / "src").iterdir() if "openprogram-conflict" in p.name]
    assert len(kept) <= conflicts
    assert all(p.read_text() in last for p in kept)
    assert not [p for p in (ws / "src").iterdir()
                if "openprogram" in p.name and p not in kept]
