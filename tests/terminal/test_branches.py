"""branches, checkout --code and branch-diff from the command line (real stores, real git)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.terminal.cli import chat_json, one_error_line, run

MODE = ["--permission-mode", "accept-edits"]


def test_switch_code_between_branches_and_compare_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = chat_json(["--workspace", str(ws), *MODE, "write a.txt\none"], tmp_path)
    sid = str(first["sessionId"])
    main = chat_json(["--session", sid, *MODE, "write a.txt\ntwo"], tmp_path)
    alt = chat_json(["--session", sid, *MODE, "--branch-from", first["assistantNodeId"],
                     "write b.txt\nalt"], tmp_path)
    # the fork started from the workspace as it was (no restore): a.txt is "two" on both
    listed = run(["branches", sid, "--json"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = {r["headId"]: r for r in json.loads(listed.stdout)}
    assert rows[alt["headId"]]["active"] and not rows[alt["headId"]]["codeDiffers"]
    assert rows[main["headId"]]["codeDiffers"]

    r = run(["checkout", sid, main["headId"], "--code"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "restored b.txt" in r.stdout and not (ws / "b.txt").exists()
    undo = next(ln for ln in r.stdout.splitlines() if ln.startswith("undo: "))
    assert f"checkout {sid} {alt['headId']}" in undo

    diff = run(["branch-diff", sid, main["headId"], alt["headId"]], tmp_path)
    assert diff.returncode == 0, diff.stderr
    assert "+++ b/b.txt" in diff.stdout and "+alt" in diff.stdout
    assert "a.txt" not in diff.stdout  # the fork inherited a.txt = two unchanged

    bad = run(["branch-diff", sid, "nope", alt["headId"]], tmp_path)
    assert "no branch 'nope'" in one_error_line(bad)


def test_a_fork_from_the_command_line_can_bring_the_code_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = chat_json(["--workspace", str(ws), *MODE, "write a.txt\none"], tmp_path)
    sid = str(first["sessionId"])
    chat_json(["--session", sid, *MODE, "write a.txt\ntwo"], tmp_path)
    r = run(["chat", "--session", sid, *MODE, "--branch-from", first["assistantNodeId"],
             "--code", "read a.txt"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (ws / "a.txt").read_text() == "one\n"  # the code as it was at the fork point
    assert "restored a.txt" in r.stderr
    undo = next(ln for ln in r.stderr.splitlines() if "undo: openprogram-lsp restore" in ln)
    back = run(["restore", undo.split("restore ")[1].rstrip("]")], tmp_path)
    assert back.returncode == 0, back.stderr
    assert (ws / "a.txt").read_text() == "two\n"

    alone = run(["chat", "--session", sid, "--code", "hi"], tmp_path)
    assert "--code needs --branch-from" in one_error_line(alone)
    unknown = run(["chat", "--session", sid, "--branch-from", "nope", "--code", "hi"], tmp_path)
    assert "no node 'nope'" in one_error_line(unknown)
