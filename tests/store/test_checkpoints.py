"""Checkpoint store: recording turns (real git, git and non-git workspaces)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.store._cp_helpers import files_of, make_workspace, open_store, sh

from openprogram_lsp.core.ports import Checkpointer
from openprogram_lsp.store.checkpoints import CheckpointStore
from openprogram_lsp.store.checkpoints.results import FileDiff, Hunk


@pytest.fixture(params=["git", "plain"])
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return make_workspace(tmp_path, git=request.param == "git")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _tree(store: CheckpointStore, cid: str) -> set[str]:
    entry = store._entry(cid)
    out = store.repo.git(["ls-tree", "-r", "-z", "--name-only", entry.commit])
    return {p.decode() for p in out.split(b"\0") if p}


def test_implements_the_port(ws: Path, home: Path) -> None:
    assert isinstance(open_store(ws, home), Checkpointer)


def test_tool_writes_and_shell_edits_land_in_their_turn(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    base = store.ensure_baseline("s1")
    assert base is not None and base.kind == "baseline" and base.files == []
    assert store.ensure_baseline("s1") is None

    (ws / "src" / "main.py").write_text("print('changed')\n")
    (ws / "new.txt").write_text("new\n")
    store.note_paths(["src/main.py", str(ws / "new.txt")])
    one = store.commit_turn("s1", "t1", "edit two files")
    assert one is not None
    assert files_of(one) == {("src/main.py", "modified"), ("new.txt", "added")}
    assert (one.session_id, one.turn_id, one.parent_id) == ("s1", "t1", base.id)

    sh("echo shell > made_by_shell.txt && rm docs/readme.md", ws)
    store.note_paths([])  # run_command: anything may have changed
    two = store.commit_turn("s1", "t2", "shell")
    assert two is not None
    assert files_of(two) == {("made_by_shell.txt", "added"), ("docs/readme.md", "deleted")}
    assert store.commit_turn("s1", "t3", "nothing") is None
    assert [c.id for c in store.list("s1")] == [two.id, one.id, base.id]


def test_a_pruned_baseline_is_not_taken_again(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    base = store.ensure_baseline("s")
    assert base is not None
    turns = []
    for n in range(2):
        (ws / "a.txt").write_text(f"{n}\n")
        store.note_paths(["a.txt"])
        cp = store.commit_turn("s", f"t{n}", "m")
        assert cp is not None
        turns.append(cp.id)
    assert base.id in store.prune(max_count=1, keep_ids=turns)
    # the session has checkpoints: no second "first edit" baseline, empty, for it
    assert store.ensure_baseline("s") is None
    (ws / "outside.txt").write_text("by hand\n")
    store.note_paths(["outside.txt"])
    outside = store.ensure_baseline("s")
    assert outside is not None and files_of(outside) == {("outside.txt", "added")}
    assert [c.kind for c in store.list("s")] == ["baseline", "turn", "turn"]
    # a session with no checkpoint left gets its baseline, even with nothing to record
    fresh = store.ensure_baseline("other")
    assert fresh is not None and fresh.files == []


def test_incremental_commit_sees_only_noted_paths(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    (ws / "a.txt").write_text("a\n")
    (ws / "unnoted.txt").write_text("u\n")
    store.note_paths(["a.txt"])
    cp = store.commit_turn("s", "t1", "m")
    assert cp is not None and files_of(cp) == {("a.txt", "added")}
    cp2 = store.commit_turn("s", "t2", "m", full_scan=True)
    assert cp2 is not None and files_of(cp2) == {("unnoted.txt", "added")}


def test_deletes_renames_and_directories(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    (ws / "src" / "util.py").rename(ws / "src" / "helpers.py")
    store.note_paths(["src/util.py", "src/helpers.py"])
    cp = store.commit_turn("s", "t1", "rename")
    assert cp is not None
    assert files_of(cp) == {("src/util.py", "deleted"), ("src/helpers.py", "added")}
    sh("mkdir -p pkg/sub && echo 1 > pkg/sub/x.py && echo 2 > pkg/y.py", ws)
    store.note_paths(["pkg"])  # a directory event, as a file watcher may send
    cp = store.commit_turn("s", "t2", "dir")
    assert cp is not None and files_of(cp) == {("pkg/sub/x.py", "added"), ("pkg/y.py", "added")}
    sh("rm -r pkg", ws)
    store.note_paths(["pkg"])
    cp = store.commit_turn("s", "t3", "rmdir")
    assert cp is not None
    assert files_of(cp) == {("pkg/sub/x.py", "deleted"), ("pkg/y.py", "deleted")}


def test_binary_files_are_recorded_and_marked(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    (ws / "img.bin").write_bytes(bytes(range(256)) * 4)
    store.note_paths(["img.bin"])
    cp = store.commit_turn("s", "t1", "bin")
    assert cp is not None
    diff = store.diff(cp.id)
    (entry,) = diff.files
    assert entry.path == "img.bin" and entry.binary is True and entry.after is None
    assert "Binary files" in diff.diff


def test_ignored_files_are_never_recorded(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    (ws / "debug.log").write_text("noise\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_text("obj\n")
    store.ensure_baseline("s")
    (ws / "debug.log").write_text("more noise\n")
    (ws / "kept.txt").write_text("kept\n")
    store.note_paths(["debug.log", "kept.txt", "build/out.o", "build"])
    cp = store.commit_turn("s", "t1", "m")
    assert cp is not None and files_of(cp) == {("kept.txt", "added")}
    sh("echo again >> debug.log", ws)
    store.note_all()
    assert store.commit_turn("s", "t2", "m") is None
    for c in store.list():
        tree = _tree(store, c.id)
        assert "debug.log" not in tree and not any(p.startswith("build/") for p in tree)


def test_configured_excludes_and_default_excludes(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    (ws / "node_modules" / "lib").mkdir(parents=True)
    (ws / "node_modules" / "lib" / "index.js").write_text("x\n")
    (ws / "secret.env").write_text("KEY=1\n")
    store = open_store(ws, tmp_path / "home", excludes=("node_modules/", "*.env"))
    base = store.ensure_baseline("s")
    assert base is not None
    tree = _tree(store, base.id)
    assert "src/main.py" in tree and "secret.env" not in tree
    assert not any(p.startswith("node_modules/") for p in tree)


def test_large_files_are_skipped_and_reported(ws: Path, home: Path) -> None:
    store = open_store(ws, home, max_file_bytes=1000)
    store.ensure_baseline("s")
    (ws / "big.dat").write_bytes(b"x" * 5000)
    (ws / "small.txt").write_text("small\n")
    store.note_paths(["big.dat", "small.txt"])
    cp = store.commit_turn("s", "t1", "m")
    assert cp is not None
    assert files_of(cp) == {("small.txt", "added")} and cp.skipped == ["big.dat"]
    assert "big.dat" not in _tree(store, cp.id)
    # a tracked file that grows too big is dropped from the record, not hashed
    (ws / "small.txt").write_bytes(b"y" * 5000)
    store.note_all()
    cp2 = store.commit_turn("s", "t2", "m")
    assert cp2 is not None and cp2.skipped == ["big.dat", "small.txt"]
    assert "small.txt" not in _tree(store, cp2.id)
    # back under the limit: recorded again
    (ws / "big.dat").write_text("tiny\n")
    store.note_all()
    cp3 = store.commit_turn("s", "t3", "m")
    assert cp3 is not None and ("big.dat", "added") in files_of(cp3)


def test_nested_repository_is_excluded_and_untouched(ws: Path, home: Path) -> None:
    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "code.c").write_text("int x;\n")
    sh("git init -q -b main && git add -A && git commit -qm nested", nested)
    (ws / "empty_repo").mkdir()
    sh("git init -q", ws / "empty_repo")
    from tests.store._cp_helpers import dir_fingerprint
    before = (dir_fingerprint(nested / ".git"), sh("git status --porcelain", nested))
    store = open_store(ws, home)
    base = store.ensure_baseline("s")
    assert base is not None
    (nested / "code.c").write_text("int y;\n")
    (ws / "src" / "main.py").write_text("changed\n")
    store.note_paths(["vendor/lib/code.c", "vendor/lib/.git/index", "src/main.py", "vendor"])
    cp = store.commit_turn("s", "t1", "m")
    assert cp is not None and files_of(cp) == {("src/main.py", "modified")}
    tree = _tree(store, cp.id)
    assert not any(p.startswith(("vendor/", "empty_repo")) for p in tree)
    assert (nested / ".git").is_dir() and (ws / "empty_repo" / ".git").is_dir()
    assert dir_fingerprint(nested / ".git") == before[0]
    assert sh("git status --porcelain", nested) == " M code.c\n"
    # a repository cloned by a shell command later is excluded too
    sh("git clone -q vendor/lib cloned", ws)
    store.note_all()
    assert store.commit_turn("s", "t2", "m") is None


def test_metadata_is_rebuilt_from_git_alone(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s1")
    for i in range(3):
        (ws / f"f{i}.txt").write_text(f"{i}\n")
        store.note_paths([f"f{i}.txt"])
        store.commit_turn("s1", f"t{i}", f"turn {i}\n\nwith a body")
    first = [c.wire() for c in store.list()]
    again = [c.wire() for c in open_store(ws, home).list()]
    assert first == again
    newest = again[0]
    assert newest["sessionId"] == "s1" and newest["turnId"] == "t2"
    assert newest["files"] == [{"path": "f2.txt", "status": "added"}]
    assert "turn 2" in newest["message"] and newest["createdAt"].endswith("Z")
    log = store.repo.git(["log", "-1", "--format=%B", "refs/heads/checkpoints"]).decode()
    assert "Openprogram-Session: s1" in log and "Openprogram-Turn: t2" in log
    assert "Openprogram-Kind: turn" in log


def test_diff_has_unified_diff_and_texts(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    (ws / "src" / "main.py").write_text("print('bye')\n")
    (ws / "docs" / "readme.md").unlink()
    store.note_paths(["src/main.py", "docs/readme.md"])
    cp = store.commit_turn("s", "t", "m")
    assert cp is not None
    diff = store.diff(cp.id)
    assert diff.checkpoint_id == cp.id
    assert "-print('hello')" in diff.diff and "+print('bye')" in diff.diff
    files = {f.path: f for f in diff.files}
    assert files["src/main.py"] == FileDiff(path="src/main.py", status="modified",
                                            before="print('hello')\n", after="print('bye')\n",
                                            hunks=[Hunk(old_start=1, old_lines=1, new_start=1,
                                                        new_lines=1)])
    assert files["docs/readme.md"] == FileDiff(path="docs/readme.md", status="deleted",
                                               before="# Project\n",
                                               hunks=[Hunk(old_start=1, old_lines=1,
                                                           new_start=0, new_lines=0)])
    only = store.diff(cp.id, "src/main.py")
    assert [f.path for f in only.files] == ["src/main.py"]
    assert "readme" not in only.diff


def test_crash_between_write_and_checkpoint_is_recovered(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    script = textwrap.dedent(f"""
        import os, pathlib
        from openprogram_lsp.store.checkpoints import CheckpointStore, CheckpointConfig
        ws = pathlib.Path({str(ws)!r})
        store = CheckpointStore(ws, home=pathlib.Path({str(home)!r}), config=CheckpointConfig())
        (ws / "src" / "main.py").write_text("written before the crash\\n")
        store.note_paths(["src/main.py"])
        store.stager.paths(["src/main.py"])  # even half-way through staging
        os._exit(1)
    """)
    proc = subprocess.run([sys.executable, "-c", script], check=False)
    assert proc.returncode == 1
    restarted = open_store(ws, home)  # a new server process: knows nothing was noted
    cp = restarted.commit_turn("s", "t-next", "next turn")
    assert cp is not None and files_of(cp) == {("src/main.py", "modified")}


def test_user_repository_is_never_touched(tmp_path: Path) -> None:
    from tests.store._cp_helpers import dir_fingerprint
    ws = make_workspace(tmp_path, git=True)
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\ntouch \"$GIT_DIR/../HOOK_RAN\"\n")
    hook.chmod(0o755)
    (ws / "src" / "main.py").write_text("user's uncommitted edit\n")
    sh("git add src/main.py", ws)  # something staged in the user's index
    (ws / "untracked.txt").write_text("u\n")

    def snapshot() -> tuple[object, ...]:
        return (sh("git status --porcelain=v2 --branch", ws), sh("git log --format=%H%n%B", ws),
                (ws / ".git" / "index").read_bytes(), dir_fingerprint(ws / ".git"))

    before = snapshot()
    store = open_store(ws, home=tmp_path / "home")
    store.ensure_baseline("s")
    ids = []
    for i in range(8):
        (ws / f"n{i}.txt").write_text(f"{i}\n")
        (ws / "src" / "util.py").write_text(f"v{i}\n")
        store.note_paths([f"n{i}.txt", "src/util.py"])
        cp = store.commit_turn("s", f"t{i}", "m")
        assert cp is not None
        ids.append(cp.id)
    undo = store.restore(ids[2]).safety_checkpoint_id
    store.restore(undo)
    store.restore(ids[0], ["src/util.py"])
    store.restore(undo)
    store.prune(max_count=3)
    assert not (ws / "HOOK_RAN").exists()
    after = snapshot()
    for n in (ws.glob("n*.txt")):
        n.unlink()
    (ws / "src" / "util.py").write_text("def f():\n    return 1\n")
    assert after[1:] == before[1:]
    # status differs only by the files the turns created
    assert sh("git status --porcelain=v2 --branch", ws) == before[0]


def test_odd_file_names(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    names = ["star*name.txt", "[brackets].txt", "sp ace.txt", "ünïcode.txt", "-dash.txt",
             ":colon.txt", "q?.txt", "tab\tname.txt", "back\\slash.txt"]
    for name in names:
        (ws / name).write_text(name)
    store.note_paths(names)
    cp = store.commit_turn("s", "t1", "m")
    assert cp is not None and {f.path for f in cp.files} == set(names)
    for name in names:
        (ws / name).unlink()
    store.note_paths(names)
    cp2 = store.commit_turn("s", "t2", "m")
    assert cp2 is not None and files_of(cp2) == {(n, "deleted") for n in names}
    store.restore(cp.id, ["star*name.txt"])
    assert sorted(p.name for p in ws.glob("*.txt")) == ["star*name.txt"]
    store.note_all()
    assert store.commit_turn("s", "t3", "m") is None


def test_store_passes_git_fsck(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    base = store.ensure_baseline("s")
    assert base is not None
    for i in range(4):
        (ws / f"f{i}.txt").write_text(f"{i}\n")
        store.note_paths([f"f{i}.txt"])
        store.commit_turn("s", f"t{i}", "m")
    (ws / "src" / "util.py").unlink()  # a delete, a new directory and a symlink, too
    (ws / "deep" / "er").mkdir(parents=True)
    (ws / "deep" / "er" / "x.txt").write_text("x\n")
    (ws / "ln").symlink_to("deep/er/x.txt")
    store.note_paths(["src/util.py", "deep/er/x.txt", "ln"])
    assert store.commit_turn("s", "t-more", "m") is not None
    # the private index, once deferred entries are written, equals the newest checkpoint's tree
    store.stager.flush()
    head_tree = store.repo.git(["rev-parse", "refs/heads/checkpoints^{tree}"]).strip()
    assert store.repo.git(["write-tree"]).strip() == head_tree
    assert store.repo.git(["status", "--porcelain", "-uall"]) == b""
    store.restore(base.id)
    store.prune(max_count=3)
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"],
                          env={"GIT_DIR": str(store.repo.git_dir), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_edits_outside_the_agent_are_not_attributed_to_the_next_turn(ws: Path, home: Path) -> None:
    store = open_store(ws, home)
    store.ensure_baseline("s")
    (ws / "user.txt").write_text("typed by the user between turns\n")
    store.note_paths(["user.txt"])  # forwarded by the file watcher
    outside = store.ensure_baseline("s")  # the next turn is about to make its first edit
    assert outside is not None and outside.kind == "baseline"
    assert files_of(outside) == {("user.txt", "added")}
    (ws / "agent.txt").write_text("written by a tool\n")
    store.note_paths(["agent.txt"])
    turn = store.commit_turn("s", "t1", "m")
    assert turn is not None and files_of(turn) == {("agent.txt", "added")}
    assert store.ensure_baseline("s") is None


def test_state_root_inside_the_workspace_is_not_recorded(ws: Path) -> None:
    store = open_store(ws, ws / ".openprogram-home")
    base = store.ensure_baseline("s")
    assert base is not None
    (ws / "a.txt").write_text("a\n")
    store.note_all()
    cp = store.commit_turn("s", "t", "m")
    assert cp is not None and files_of(cp) == {("a.txt", "added")}
    assert not any(p.startswith(".openprogram-home") for p in _tree(store, cp.id))


def test_paths_through_a_symlinked_directory(ws: Path, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "linked").symlink_to(outside)
    store = open_store(ws, home)
    store.ensure_baseline("s")
    (outside / "x.txt").write_text("written through the link\n")
    (ws / "real.txt").write_text("r\n")
    store.note_paths(["linked/x.txt", "real.txt"])
    cp = store.commit_turn("s", "t", "m")
    assert cp is not None and files_of(cp) == {("real.txt", "added")}
    assert "linked" in _tree(store, cp.id) and "linked/x.txt" not in _tree(store, cp.id)
    store.restore(cp.id, ["linked"])
    assert (ws / "linked").is_symlink() and (outside / "x.txt").exists()


def test_unique_id_prefixes_are_accepted(ws: Path, home: Path) -> None:
    from openprogram_lsp.core.errors import NotFound

    store = open_store(ws, home)
    base = store.ensure_baseline("s")
    assert base is not None
    (ws / "a.txt").write_text("a\n")
    store.note_paths(["a.txt"])
    cp = store.commit_turn("s", "t", "m")
    assert cp is not None
    assert store.get(cp.id[:12]).id == cp.id
    assert store.diff(cp.id[:12]).checkpoint_id == cp.id
    store.restore(base.id[:14])
    assert not (ws / "a.txt").exists()
    with pytest.raises(NotFound):
        store.get("c")  # too short to mean anything


def test_whole_objects_are_read_from_the_baseline_pack(ws: Path, home: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp.store.checkpoints import stage
    from openprogram_lsp.store.gitobj import MissingObject, ObjectDB

    monkeypatch.setattr(stage, "BULK_ADD", 1)
    (ws / "big.txt").write_text("line of text\n" * 5000)  # several zlib blocks
    (ws / "random.bin").write_bytes(os.urandom(70_000))  # incompressible
    store = open_store(ws, home)
    base = store.ensure_baseline("s")
    assert base is not None
    listing = store.repo.git(["ls-tree", "-r", "-z", store._entry(base.id).commit])
    blobs = [line.split()[2].decode() for line in listing.split(b"\0") if line]
    assert len(blobs) >= 6
    for sha in blobs:
        assert not (store.repo.git_dir / "objects" / sha[:2] / sha[2:]).exists()
        assert ObjectDB(store.repo.git_dir).read(sha) == (
            "blob", store.repo.git(["cat-file", "blob", sha]))
    with pytest.raises(MissingObject):
        ObjectDB(store.repo.git_dir).read("0" * 40)


def test_a_huge_workspace_is_refused_once_not_walked_every_turn(ws: Path, home: Path) -> None:
    from openprogram_lsp.core.errors import CheckpointError

    store = open_store(ws, home, max_files=3)
    with pytest.raises(CheckpointError, match="limit 3"):
        store.ensure_baseline("s")
    with pytest.raises(CheckpointError, match="checkpoints are off"):
        store.commit_turn("s", "t", "m")


def test_a_baseline_known_to_exist_needs_no_call(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, git=False)
    store = open_store(ws, tmp_path / "home")
    assert not store.baseline_ready("s")  # nothing known: ensure_baseline decides
    assert store.ensure_baseline("s") is not None
    assert store.baseline_ready("s") and not store.baseline_ready("other session")
    (ws / "outside.txt").write_text("edited by the user\n")
    store.note_paths(["outside.txt"])  # what the watcher reports between turns
    assert not store.baseline_ready("s")  # that change gets its own baseline first
    assert store.ensure_baseline("s") is not None
    assert store.baseline_ready("s")
