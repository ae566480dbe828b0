"""diff, restore and undo as the README writes them: no --workspace needed, undo in one step."""

from __future__ import annotations

import json
from pathlib import Path

from tests.terminal.cli import chat_json, one_error_line, run


def _two_turns(tmp: Path, ws: Path) -> tuple[str, dict[str, str]]:
    first = chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
                       "write a.txt\none"], tmp)
    sid = str(first["sessionId"])
    chat_json(["--session", sid, "--permission-mode", "accept-edits", "write a.txt\ntwo"], tmp)
    chat_json(["--session", sid, "--permission-mode", "accept-edits", "write b.txt\nnew"], tmp)
    r = run(["checkpoints", "--session", sid, "--json"], tmp)
    assert r.returncode == 0, r.stderr
    turns = [c for c in json.loads(r.stdout) if c["kind"] == "turn"]
    by_file = {c["files"][0]["path"] + ":" + str(i): c["id"] for i, c in enumerate(turns)}
    return sid, by_file


def test_diff_and_restore_find_the_checkpoint_from_any_directory(tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    ws.mkdir()
    elsewhere.mkdir()
    first = chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
                       "write a.txt\none"], tmp_path)
    chat_json(["--session", first["sessionId"], "--permission-mode", "accept-edits",
               "write a.txt\ntwo"], tmp_path)
    listed = run(["checkpoints", "--session", first["sessionId"]], tmp_path, cwd=elsewhere)
    ids = [ln.split()[0] for ln in listed.stdout.splitlines()]
    newest, older = ids[0], ids[1]
    diff = run(["diff", newest], tmp_path, cwd=elsewhere)
    assert diff.returncode == 0 and "+two" in diff.stdout, diff.stderr
    r = run(["restore", older], tmp_path, cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    assert (ws / "a.txt").read_text() == "one\n"
    hint = next(ln for ln in r.stdout.splitlines() if ln.startswith("undo with:"))
    assert f"--workspace {ws}" in hint
    undo_args = hint.removeprefix("undo with: openprogram-lsp ").split()
    assert run(undo_args, tmp_path, cwd=elsewhere).returncode == 0  # the hint runs as printed
    assert (ws / "a.txt").read_text() == "two\n"


def test_an_unknown_checkpoint_names_what_to_pass(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits", "write a\nx"],
              tmp_path)
    line = one_error_line(run(["diff", "cnosuchthing"], tmp_path))
    assert "unknown checkpoint id 'cnosuchthing'" in line and "--workspace" in line
    line = one_error_line(run(["restore", "cnosuchthing", "--workspace", str(ws)], tmp_path))
    assert f"in workspace {ws}" in line


def test_restoring_a_turns_own_checkpoint_says_how_to_undo_the_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    result = chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
                        "write a.txt\none"], tmp_path)
    cp = result["checkpoint"]["id"]
    r = run(["restore", cp], tmp_path)
    assert r.returncode == 0
    assert "restored 0 files" in r.stdout and "AFTER turn" in r.stdout
    assert f"openprogram-lsp undo {cp[:12]} --workspace {ws}" in r.stdout


def test_undo_returns_a_turns_files_and_can_be_redone(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
                       "write a.txt\none"], tmp_path)
    sid = first["sessionId"]
    second = chat_json(["--session", sid, "--permission-mode", "accept-edits",
                        "write a.txt\ntwo"], tmp_path)
    third = chat_json(["--session", sid, "--permission-mode", "accept-edits",
                       "write b.txt\nnew"], tmp_path)
    r = run(["undo", second["userNodeId"]], tmp_path)  # a node id from `history`
    assert r.returncode == 0, r.stderr
    assert (ws / "a.txt").read_text() == "one\n"
    assert (ws / "b.txt").read_text() == "new\n"  # the later turn's file stays
    r = run(["undo", "--workspace", str(ws)], tmp_path)  # the newest turn: deletes b.txt
    assert r.returncode == 0, r.stderr
    assert not (ws / "b.txt").exists()
    redo = next(ln for ln in r.stdout.splitlines() if ln.startswith("redo with:"))
    assert run(redo.removeprefix("redo with: openprogram-lsp ").split(), tmp_path
               ).returncode == 0
    assert (ws / "b.txt").read_text() == "new\n"
    base = run(["checkpoints", "--workspace", str(ws), "--json"], tmp_path)
    listed = json.loads(base.stdout)
    baseline = next(c["id"] for c in listed if c["kind"] == "baseline")
    # the undo of the second turn stands, the third's was redone
    undone = {c["turnId"]: "undoneBy" in c for c in listed if c["kind"] == "turn"}
    assert list(undone.values()) == [False, True, False], undone
    assert run(["undo", "--workspace", str(ws)], tmp_path).returncode == 0  # the third again
    r = run(["undo", "--workspace", str(ws)], tmp_path)  # skips the undone second: the first
    assert r.returncode == 0 and first["checkpoint"]["id"][:12] in r.stdout, r.stdout
    assert not (ws / "a.txt").exists()
    assert "not a turn's" in one_error_line(run(["undo", baseline], tmp_path))
    assert third["checkpoint"]["id"]


def test_undo_acts_on_the_current_branch_and_refuses_an_empty_undo(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    mode = ["--permission-mode", "accept-edits"]
    first = chat_json(["--workspace", str(ws), *mode, "write a.txt\none"], tmp_path)
    sid = str(first["sessionId"])
    main = chat_json(["--session", sid, *mode, "write a.txt\ntwo"], tmp_path)
    alt = chat_json(["--session", sid, *mode, "--branch-from", first["assistantNodeId"],
                     "write b.txt\nalt"], tmp_path)
    # back to the main branch with its code: b.txt (the other branch's) goes
    assert run(["checkout", sid, main["headId"], "--code"], tmp_path).returncode == 0
    assert not (ws / "b.txt").exists() and (ws / "a.txt").read_text() == "two\n"
    r = run(["undo", "--workspace", str(ws)], tmp_path)
    assert r.returncode == 0, r.stderr
    # the newest turn of THIS branch (a.txt two -> one), not the other branch's newer b.txt
    assert main["checkpoint"]["id"][:12] in r.stdout, r.stdout
    assert (ws / "a.txt").read_text() == "one\n"
    again = run(["undo", main["checkpoint"]["id"], "--workspace", str(ws)], tmp_path)
    assert "is undone already" in one_error_line(again) and "restore " in again.stderr
    assert alt["checkpoint"]["id"]


def test_undo_leaves_a_file_too_large_to_record_and_says_so(tmp_path: Path) -> None:
    """#31: a 6 MB file (over checkpoints.max_file_bytes) truncated by a turn was removed by
    undo; now it is left as the turn made it, and named as not restored."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.bin").write_bytes(b"\x01" * 6_000_000)
    chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
               "write keep.txt\nfirst"], tmp_path)  # the session's baseline knows data.bin
    chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
               "write data.bin\nsmall"], tmp_path)
    assert (ws / "data.bin").read_bytes() == b"small\n"
    r = run(["undo", "--workspace", str(ws)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (ws / "data.bin").read_bytes() == b"small\n"  # left as it is: never deleted
    assert "not restored: data.bin: larger than checkpoints.max_file_bytes (5 MiB)" in r.stdout
    assert "0 file(s) back as before it" in r.stdout, r.stdout


def test_undo_of_a_shell_turn_puts_directories_and_links_back(tmp_path: Path) -> None:
    """#31: a symlink to a directory replaced by a real (empty) directory, an empty directory
    removed and one made: undo brings each back exactly, and its redo undoes that."""
    ws = tmp_path / "ws"
    (ws / "real").mkdir(parents=True)
    (ws / "real" / "f.txt").write_text("f\n")
    (ws / "link").symlink_to("real")
    (ws / "empty").mkdir()
    chat_json(["--workspace", str(ws), "--permission-mode", "accept-edits",
               "write keep.txt\nfirst"], tmp_path)
    chat_json(["--workspace", str(ws), "--permission-mode", "bypass",
               "run rm link && mkdir link && rmdir empty && mkdir -p made/deep"], tmp_path)
    assert (ws / "link").is_dir() and not (ws / "link").is_symlink()
    assert not (ws / "empty").exists() and (ws / "made" / "deep").is_dir()
    r = run(["undo", "--workspace", str(ws)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (ws / "link").is_symlink() and str((ws / "link").readlink()) == "real"
    assert (ws / "empty").is_dir() and not any((ws / "empty").iterdir())
    assert not (ws / "made").exists()
    assert "not restored" not in r.stdout, r.stdout
    redo = next(ln for ln in r.stdout.splitlines() if ln.startswith("redo with:"))
    assert run(redo.removeprefix("redo with: openprogram-lsp ").split(), tmp_path
               ).returncode == 0
    assert (ws / "link").is_dir() and not (ws / "link").is_symlink()
    assert not (ws / "empty").exists() and (ws / "made" / "deep").is_dir()
