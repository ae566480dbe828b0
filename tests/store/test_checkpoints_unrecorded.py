"""What a git tree cannot hold (#31): files the store could not record (too large, special)
are never deleted or overwritten by a restore and are named in its result; empty directories,
symlinks (to files, to directories, dangling), executable bits and private modes round-trip
exactly through checkpoint -> restore -> undo of the restore."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from tests.store._cp_helpers import make_workspace, open_store, sh

from openprogram_lsp.store.checkpoints import CheckpointStore


def snapshot(ws: Path) -> dict[str, str]:
    """Every entry below the workspace (but .git): type, exact mode, content or link target."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        rel_dir = os.path.relpath(dirpath, ws)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, ws)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.readlink(full)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = "dir"
            elif stat.S_ISREG(st.st_mode):
                out[rel] = f"file {stat.S_IMODE(st.st_mode):o} {Path(full).read_bytes()[:40]!r}"
                out[rel] += f" {st.st_size}"
            else:
                out[rel] = f"special {stat.S_IFMT(st.st_mode):o}"
    return out


def turn(store: CheckpointStore, tid: str, noted: list[str] | None = None) -> str:
    if noted is None:
        store.note_all()  # a shell command: the checkpoint walks the tree
    else:
        store.note_paths(noted)
    cp = store.commit_turn("s", tid, "m")
    assert cp is not None
    return cp.id


@pytest.fixture(params=["walk", "noted"])
def how(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_undo_never_deletes_a_file_too_large_to_record(tmp_path: Path, how: str) -> None:
    ws = make_workspace(tmp_path, git=True)
    store = open_store(ws, tmp_path / "home", max_file_bytes=100_000)
    (ws / "data.bin").write_bytes(b"x" * 200_000)
    assert store.ensure_baseline("s") is not None
    (ws / "data.bin").write_bytes(b"small\n")  # the turn truncates it
    cp = turn(store, "t1", None if how == "walk" else ["data.bin"])
    out = store.undo(cp)
    assert (ws / "data.bin").read_bytes() == b"small\n"  # left as the turn made it
    assert out.restored == []
    assert [(n.path, n.reason) for n in out.not_restored or []] == [
        ("data.bin", "larger than checkpoints.max_file_bytes (0.0953674 MiB): never recorded")]
    assert out.skipped == ["data.bin"]


def test_a_big_file_the_turn_grew_or_changed_is_named_not_touched(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home", max_file_bytes=1000)
    (ws / "grows.txt").write_text("small\n")
    (ws / "big.bin").write_bytes(b"a" * 5000)
    assert store.ensure_baseline("s") is not None
    (ws / "grows.txt").write_bytes(b"g" * 5000)
    (ws / "big.bin").write_bytes(b"b" * 6000)
    cp = turn(store, "t1", ["grows.txt", "big.bin"])
    listed = store.get(cp)
    assert listed.skipped == ["big.bin", "grows.txt"]
    before = snapshot(ws)
    out = store.undo(cp)
    assert snapshot(ws) == before  # nothing could be put back: nothing was touched
    assert {n.path for n in out.not_restored or []} == {"big.bin", "grows.txt"}


def test_a_special_file_is_never_replaced_or_removed(tmp_path: Path, how: str) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    os.mkfifo(ws / "pipe")
    base = store.ensure_baseline("s")
    assert base is not None and base.skipped == ["pipe"]
    (ws / "pipe").unlink()
    (ws / "pipe").write_text("now a file\n")
    cp = turn(store, "t1", None if how == "walk" else ["pipe"])
    out = store.undo(cp)
    assert (ws / "pipe").read_text() == "now a file\n"
    assert [n.path for n in out.not_restored or []] == ["pipe"]
    assert "not a regular file" in (out.not_restored or [])[0].reason
    # the other way: a recorded file the turn replaced by a FIFO stays a FIFO
    (ws / "other").write_text("text\n")
    turn(store, "t2", ["other"])
    (ws / "other").unlink()
    os.mkfifo(ws / "other")
    cp3 = turn(store, "t3", None if how == "walk" else ["other"])
    out = store.undo(cp3)
    assert stat.S_ISFIFO((ws / "other").lstat().st_mode)
    assert [n.path for n in out.not_restored or []] == ["other"]


def test_every_file_type_round_trips_through_restore_and_its_undo(tmp_path: Path,
                                                                   how: str) -> None:
    ws = make_workspace(tmp_path, git=True)
    store = open_store(ws, tmp_path / "home")
    (ws / "real").mkdir()
    (ws / "real" / "f.txt").write_text("f\n")
    (ws / "dirlink").symlink_to("real")
    (ws / "filelink").symlink_to("src/main.py")
    (ws / "dangling").symlink_to("nowhere")
    (ws / "empty").mkdir()
    (ws / "nest" / "a" / "b").mkdir(parents=True)
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "secret").write_text("k\n")
    (ws / "secret").chmod(0o600)
    base = store.ensure_baseline("s")
    assert base is not None
    state0 = snapshot(ws)
    # the turn swaps everything around
    sh("rm dirlink && mkdir dirlink && rm filelink && echo real > filelink && "
       "rm dangling && ln -s src dangling && rmdir empty && rm -r nest && mkdir -p made/x && "
       "chmod 644 run.sh && chmod 640 secret && ln -s made/x tolink && mkdir src/newempty", ws)
    noted = ["dirlink", "filelink", "dangling", "empty", "nest", "made", "run.sh", "secret",
             "tolink", "src/newempty"]
    cp = turn(store, "t1", None if how == "walk" else noted)
    state1 = snapshot(ws)
    listed = {(f.path, f.status) for f in store.get(cp).files}
    assert {("empty/", "deleted"), ("made/x/", "added"), ("src/newempty/", "added"),
            ("nest/a/b/", "deleted")} <= listed, listed
    out = store.restore(base.id)
    assert snapshot(ws) == state0
    assert not out.not_restored
    store.restore(out.safety_checkpoint_id)  # undo the restore
    assert snapshot(ws) == state1
    undo = store.undo(cp)  # and undo the turn itself
    assert snapshot(ws) == state0 and not undo.not_restored


def test_a_restore_of_some_paths_leaves_other_empty_directories(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    (ws / "keep").mkdir()
    base = store.ensure_baseline("s")
    assert base is not None
    (ws / "keep").rmdir()
    (ws / "other").mkdir()
    turn(store, "t1")
    store.restore(base.id, ["src"])
    assert not (ws / "keep").exists() and (ws / "other").is_dir()
    store.restore(base.id, ["keep"])
    assert (ws / "keep").is_dir() and (ws / "other").is_dir()


def test_a_directory_only_change_is_a_checkpoint_and_survives_a_restart(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    home = tmp_path / "home"
    store = open_store(ws, home)
    assert store.ensure_baseline("s") is not None
    (ws / "fresh").mkdir()
    cp = turn(store, "t1")
    assert [(f.path, f.status) for f in store.get(cp).files] == [("fresh/", "added")]
    out = open_store(ws, home).undo(cp)  # another process reads the tables back
    assert not (ws / "fresh").exists() and out.restored == ["fresh/"]


def test_a_walk_rereads_only_directories_that_changed_and_misses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp.store.checkpoints import extras

    monkeypatch.setattr(extras, "RACY_NS", -1)  # every listing kept (none is 2 s old yet)
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    (ws / "src" / "old").mkdir()
    assert store.ensure_baseline("s") is not None
    assert "src/old" in store._listings and "src" in store._listings
    reads: list[str] = []
    real = os.scandir

    def counting(path):  # type: ignore[no-untyped-def]
        reads.append(os.path.relpath(path, ws))
        return real(path)

    (ws / "src" / "old" / "new").mkdir()  # moves src/old's mtime: read again
    os.mkfifo(ws / "docs" / "pipe")  # moves docs' mtime
    store.note_all()
    os.scandir = counting  # type: ignore[assignment]
    try:
        cp = store.commit_turn("s", "t1", "shell")
    finally:
        os.scandir = real  # type: ignore[assignment]
    assert cp is not None
    assert {(f.path, f.status) for f in cp.files} == {("src/old/new/", "added")}
    assert cp.skipped == ["docs/pipe"]
    assert "." not in reads and "src" not in reads  # unchanged since listed: not read
    assert "src/old" in reads and "docs" in reads


def test_a_directory_whose_mtime_was_set_back_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command makes an empty directory and a FIFO, then sets their parents' mtime back
    (``touch -d``): the walk keyed on mtime kept the old listings, no checkpoint was taken and
    undo left the directory. Keyed on ctime (which only the kernel sets) both are seen."""
    from openprogram_lsp.store.checkpoints import extras

    monkeypatch.setattr(extras, "RACY_NS", -1)
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    assert store.ensure_baseline("s") is not None
    assert "src" in store._listings and "docs" in store._listings
    stamps = {d: os.stat(ws / d) for d in ("src", "docs")}
    (ws / "src" / "hidden").mkdir()
    os.mkfifo(ws / "docs" / "pipe")
    for d, st in stamps.items():
        os.utime(ws / d, ns=(st.st_atime_ns, st.st_mtime_ns))
    cp = turn(store, "t1")
    assert [(f.path, f.status) for f in store.get(cp).files] == [("src/hidden/", "added")]
    assert store.get(cp).skipped == ["docs/pipe"]
    store.undo(cp)
    assert not (ws / "src" / "hidden").exists()


def test_an_empty_dot_git_in_any_case_is_never_recorded(tmp_path: Path) -> None:
    """Git never tracks ``.GIT``, and restore refuses it as ``.git``: recorded as an empty
    directory it could be neither removed nor named; it is left out like ``.git``."""
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    assert store.ensure_baseline("s") is not None
    (ws / "src" / ".GIT").mkdir()
    (ws / "made").mkdir()
    cp = turn(store, "t1")
    assert [(f.path, f.status) for f in store.get(cp).files] == [("made/", "added")]


def _as_nobody(ws: Path, home: Path, user: int | None) -> dict[str, object]:
    """Baseline, a turn, then a restore of the baseline, in a forked child that runs as
    ``user`` (modules imported beforehand: the child may not read our source tree)."""
    import encodings.ascii
    import encodings.latin_1  # noqa: F401
    import json

    from openprogram_lsp.store.checkpoints import restore as _restore  # noqa: F401

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read)
            if user is not None:
                os.setgid(user)
                os.setuid(user)
            os.environ["HOME"] = str(home)
            store = open_store(ws, home)
            base = store.ensure_baseline("s")
            assert base is not None
            (ws / "notes.txt").write_text("agent\n")  # the turn: a readable change beside it
            store.note_all()
            turn = store.commit_turn("s", "t1", "m")
            out = store.restore(base.id)
            os.write(write, json.dumps({
                "base_skipped": base.skipped, "turn": turn is not None,
                "not_restored": [[n.path, n.reason] for n in out.not_restored or []],
                "notes": (ws / "notes.txt").exists()}).encode())
            code = 0
        except BaseException as exc:  # reported to the parent, which fails the test
            os.write(write, json.dumps({"error": repr(exc)}).encode())
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    result: dict[str, object] = json.loads(data)
    return result


def test_an_unreadable_file_is_left_out_and_never_touched(tmp_path: Path) -> None:
    """A real unreadable file: root reads everything, so the store runs as nobody then."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="op-unreadable-"))  # /tmp: reachable for nobody
    try:
        ws, home = root / "ws", root / "home"
        ws.mkdir()
        home.mkdir()
        (ws / "secret.key").write_text("top secret\n")
        os.chmod(ws / "secret.key", 0o000)
        user = None
        if os.geteuid() == 0:
            user = 65534  # nobody: the workspace is its own, secret.key stays root's
            for p in (root, ws, home):
                os.chown(p, user, user)
        out = _as_nobody(ws, home, user)
        assert "error" not in out, out
        assert out["base_skipped"] == ["secret.key"] and out["turn"] is True
        assert out["not_restored"] == [] and out["notes"] is False
        os.chmod(ws / "secret.key", 0o600)
        assert (ws / "secret.key").read_text() == "top secret\n"
    finally:
        shutil.rmtree(root, ignore_errors=True)
