"""The Neovim plugin in a real headless Neovim against the real language server: chat,
progress, questions, checkpoints, health, the server's end, steering, subagents, hooks, daily
use (approvals: test_nvim_approvals.py; sessions and branches: test_nvim_sessions.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from openprogram_lsp import __version__
from tests.editors.nvim import runner
from tests.editors.nvim.runner import joined, run_scripted

pytestmark = [
    pytest.mark.usefixtures("require_nvim"),
    pytest.mark.timeout(180),
]


@pytest.mark.parametrize("as_010", [False, True], ids=["nvim-0.11-paths", "nvim-0.10-paths"])
def test_chat_with_approval_writes_file_and_streams_into_panel(
        env: dict[str, Path], as_010: bool) -> None:
    out = run_scripted(env, "chat_approval", [
        {"text": "I will write the file now.",
         "tool_calls": [{"name": "write_file",
                         "arguments": {"path": "hello.txt", "content": "hello world\n"}}]},
        {"text": "Done: hello.txt is written."},
        {"text": "You are welcome."},
    ], as_010=as_010)
    assert out["file"] == "hello world\n"
    # The approval came through vim.ui.select with the server's options and the tool's title.
    assert out["items"][0][0] == "Allow once"
    assert "Reject" in out["items"][0]
    assert "write_file" in out["prompts"][0] and "hello.txt" in out["prompts"][0]
    # The edit's diff was on screen while choosing, and closed afterwards.
    assert "+hello world" in out["diff"]
    assert not out["diff_open_after"]
    # Streamed reply and tool call in the panel, one header per message.
    text = joined(out["lines"])
    assert "## You" in text and "write hello.txt please" in text
    assert "I will write the file now." in text and "Done: hello.txt is written." in text
    assert any("hello.txt" in ln and "edit" in ln and "completed" in ln for ln in out["lines"])
    assert out["events"].count("text.delta") >= 2
    assert "tool.started" in out["events"] and "tool.finished" in out["events"]
    # The client declared the capability and passed the model as an initialization option.
    caps = out["experimental"]["openprogram"]
    assert caps["permissions"] is True and caps["questions"] is True  # (and what others add)
    assert out["init_options"]["model"].startswith("scripted:")
    assert out["input_buftype"] == "nofile"
    assert out["panel_windows"] == 1
    assert out["winbar"].startswith("OpenProgram · write hello.txt please")
    # The second message went through the prompt buffer, on the same session.
    text2 = joined(out["lines2"])
    assert "thanks" in text2 and "You are welcome." in text2
    assert text2.count("## You") == 2


def test_progress_reaches_lsp_progress(env: dict[str, Path]) -> None:
    out = run_scripted(env, "chat_approval", [
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "hello.txt", "content": "x\n"}}]},
        {"text": "Done."},
        {"text": "Bye."},
    ])
    assert "begin" in out["progress"] and "end" in out["progress"]


def test_questions_through_vim_ui(env: dict[str, Path]) -> None:
    out = run_scripted(env, "question", [
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Favourite colour?"}}]},
        {"tool_calls": [{"name": "ask_user", "arguments": {
            "question": "Which file?", "options": ["a.txt", "b.txt"]}}]},
        {"text": "Thanks, noted."},
    ])
    assert any("Favourite colour?" in p for p in out["inputs"])
    sel = out["selects"][0]
    assert sel["prompt"] == "Which file?" and sel["items"][:2] == ["a.txt", "b.txt"]
    assert sel["kind"] == "openprogram.question"
    calls = [c for n in out["history"]["nodes"] for c in n.get("toolCalls", [])]
    assert [c["output"] for c in calls] == ["blue", "b.txt"]
    text = joined(out["lines"])
    assert "Thanks, noted." in text
    # The answers show beside the tool calls in the panel.
    assert "Favourite colour? · think · completed → blue" in text
    assert "→ b.txt" in text


def test_checkpoint_review_restore_and_undo(env: dict[str, Path]) -> None:
    out = run_scripted(env, "checkpoints", [
        {"text": "Creating.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "notes.txt", "content": "one\n"}}]},
        {"text": "Created."},
        {"text": "Changing.", "tool_calls": [{"name": "edit_file", "arguments": {
            "path": "notes.txt", "old_text": "one", "new_text": "two"}}]},
        {"text": "Changed."},
        {"text": "Adding.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "blob.bin", "content": "\u0000\u0001binary\u0000"}}]},
        {"text": "Added."},
    ])
    assert out["v1"] == "one\n" and out["v2"] == "two\n"
    assert out["tabs"] == 1
    wins = out["diff_windows"]
    assert len(wins) == 2 and all(w["diff"] for w in wins)
    assert wins[0]["lines"] == ["one"] and wins[1]["lines"] == ["two"]
    # named for their tab labels: the file, the side and the turn, no "/" to shrink them
    assert wins[0]["name"].endswith("/notes.txt · before · turn: change notes.txt")
    assert wins[1]["name"].endswith("/notes.txt · after · turn: change notes.txt")
    assert out["nested_name"] == "main.py (src \u203a app) · after · turn: fix it"
    # An added binary file: nothing before, a marker after.
    assert out["binary_windows"] == [[""], ["(binary file)"]]
    assert out["after_restore"] == "one\n"
    assert out["safety"] and out["safety"] in out["restore_message"]
    assert out["after_undo"] == "two\n"


def test_checkhealth_reports_server_model_and_nvim(env: dict[str, Path]) -> None:
    # the installed console script: its path, `--version` and `sandbox` as Neovim runs them
    out = run_scripted(env, "health", [{"text": "unused"}], exec_server=True)
    report = joined(out["report"])
    assert f"version: openprogram-lsp {__version__} (matches the plugin, {__version__})" in report
    assert "model: scripted:" in report
    assert "Neovim 0.1" in report
    assert "sandbox on: bubblewrap at " in report  # CI installs bwrap: scripts/install-sandbox
    assert "Clipboard images" in report and ":OpenProgramImage with no file" in report
    assert "ERROR" not in report
    bad = joined(out["bad_setting"])
    assert "sandbox` failed: openprogram-lsp: error: OPENPROGRAM_SANDBOX_NETWORK='maybe'" in bad
    mismatch = joined(out["mismatch"])
    assert (f"WARNING version: openprogram-lsp {__version__} does not match the plugin (9.9.9)"
            in mismatch), mismatch
    assert "install openprogram-lsp 9.9.9" in mismatch


def test_the_plugin_version_is_the_server_version() -> None:
    init = Path(__file__).resolve().parents[2] / "editors/nvim/lua/openprogram/init.lua"
    assert f"M.version = '{__version__}'" in init.read_text()


def test_server_exit_ends_the_turn_in_the_panel(env: dict[str, Path]) -> None:
    # a real exec: Neovim's forced stop signals the pid it holds, the server's own
    out = run_scripted(env, "server_exit", [{"text": "slow " * 200, "delay": 0.05}],
                       exec_server=True)
    assert out["busy"] is False
    assert "the server exited" in joined(out["lines"])


def test_missing_server_gives_a_clear_message(env: dict[str, Path]) -> None:
    out = run_scripted(env, "no_server", [{"text": "unused"}])
    assert out["busy"] is False
    assert "server is not running" in joined(out["lines"])
    assert any("could not start" in n or "not executable" in n for n in out["notes"])
    report = joined(out["report"])
    assert "ERROR" in report and "/nonexistent/openprogram-lsp is not executable" in report


def test_steering_shows_where_the_model_saw_it(env: dict[str, Path]) -> None:
    out = run_scripted(env, "steer", [
        {"text": "Looking at the files first.", "delay": 0.1,
         "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
        {"text": "Switching to tabs as asked."},
    ])
    [reply] = [n for n in out["history"]["nodes"] if n["role"] == "assistant"]
    assert reply["metadata"]["interjections"] == [
        {"beforeStep": 1, "kind": "steer", "text": "use tabs, not spaces"}]
    assert "steered: use tabs, not spaces" in joined(out["streamed"])
    lines = out["lines"]
    first = lines.index("Looking at the files first.")
    steer = lines.index("> **steering** · use tabs, not spaces")
    after = lines.index("Switching to tabs as asked.")
    assert first < steer < after
    assert any("list_dir" in ln or "List" in ln for ln in lines[first + 1:steer])


def test_subagents_and_follow_ups_in_the_panel(env: dict[str, Path]) -> None:
    wait = ("i=0; while [ ! -f {f} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; "
            "echo released")

    def hold(path: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "run_command",
                                "arguments": {"command": wait.format(f=path)}}]}

    runner.write_script(env["tmp"] / "child.json", [
        {"text": "helper report: all good"},
        hold("go2.txt"),
        {"text": "second report: fine"},
    ])
    out = run_scripted(env, "subagents", [
        {"tool_calls": [{"name": "agent", "arguments": {"prompt": "check it", "label": "helper"}}]},
        hold("go.txt"),
        {"text": "Waiting for the helper."},
        {"text": "The helper says all is well."},
        {"tool_calls": [{"name": "agent", "arguments": {"prompt": "check slowly",
                                                         "label": "second"}}]},
        {"text": "Started the second helper."},
        {"text": "Thanks for the second report."},
    ])
    # Turn 1: live notes for the helper, then its reply taken into the running turn, shown
    # as a follow-up interjection before the step that saw it.
    streamed1 = joined(out["streamed1"])
    assert "subagent helper started" in streamed1
    assert "subagent helper done" in streamed1
    assert "reported back into the running turn" in streamed1
    assert "helper report" not in streamed1.split("subagent helper started")[0]
    lines1 = out["lines1"]
    follow = next(i for i, ln in enumerate(lines1)
                  if ln.startswith("> **follow-up** · [Agent helper"))
    assert lines1.index("Waiting for the helper.") < follow
    assert follow < lines1.index("The helper says all is well.")
    assert "> helper report: all good" in lines1
    # Turn 2's helper finished after the turn: a follow-up turn, streamed then redrawn.
    assert out["kinds"].count("follow_up") == 1
    assert out["follow"]["watching"] == out["follow"]["started"]  # the follow-up turn, watched
    assert "follow-up" in out["follow"]["winbar"]
    streamed = joined(out["follow"]["streamed"])
    assert "## Follow-up" in streamed and "Thanks for the second report." in streamed
    assert "reported back as a follow-up turn" in streamed
    lines3 = out["lines3"]
    header = lines3.index(next(ln for ln in lines3 if ln.startswith("## Follow-up")))
    assert lines3[header + 1].startswith("[Agent second finished (done)")
    assert "second report: fine" in lines3[header:]
    assert lines3.index("Thanks for the second report.") > header
    # The subagents' own turns never streamed into the panel.
    assert "helper report: all good" not in joined(lines3).replace("> helper report: all good", "")
    roles = [(n["role"], (n.get("metadata") or {}).get("source")) for n in out["history"]["nodes"]]
    assert roles[-2:] == [("user", "follow_up"), ("assistant", "follow_up")]


def test_question_answered_elsewhere_closes_its_prompt(env: dict[str, Path]) -> None:
    out = run_scripted(env, "question_elsewhere", [
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Favourite colour?"}}]},
        {"text": "Green it is."},
    ])
    assert out["answer"] == {"accepted": True}
    assert out["pending_key"] == out["question_id"]
    assert out["pending_at_finish"] == 0 and out["pending"] == 0
    calls = [c for n in out["history"]["nodes"] for c in n.get("toolCalls", [])]
    assert [c["output"] for c in calls] == ["green"]


def test_a_call_blocked_by_a_hook_shows_why_on_its_line(env: dict[str, Path]) -> None:
    config = env["home"] / "xdg-config" / "openprogram-lsp"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo 'no shell today' >&2; exit 2"}]}]}}))
    out = run_scripted(env, "blocked", [
        {"text": "Running it.",
         "tool_calls": [{"name": "run_command", "arguments": {"command": "touch ran"}}]},
        {"text": "The hook refused it."}])
    assert not (env["ws"] / "ran").exists()
    assert any("failed → blocked: no shell today" in ln for ln in out["streamed"])
    assert any("failed → blocked: no shell today" in ln for ln in out["lines"])


def test_daily_use_input_layout_mode_and_quit(env: dict[str, Path]) -> None:
    out = run_scripted(env, "daily", [
        {"text": "Two lines received."},
        {"text": "Once upon a time " * 60, "delay": 0.05},
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "notes.md", "content": "hi\n"}}]},
        {"text": "Written."},
    ])
    assert out["float"] and out["input_float"] and out["input_focused"]
    assert out["input_buftype"] == "nofile"
    # the line break and the indentation arrive as typed; the input is cleared
    assert out["sent"] == "first line\n    indented   second"
    assert out["input_after_send"] == [""]
    assert out["cancel_status"] == "cancelled"
    assert any("accept-edits" in item for item in out["mode_items"])
    assert "mode accept-edits" in out["winbar"]
    assert out["asked"] == 0 and out["file"] == "hi\n"
    assert "↑" in out["winbar_after"] and "↓" in out["winbar_after"]
    assert re.search(r"ctx \d+%", out["winbar_after"])  # the context.usage meter
    assert out["visible_after_toggle"] is False
    assert out["draft_modified"] is False
    assert "qa_error" not in out  # :qa quit Neovim, so nothing was written after flush


def test_a_question_while_typing_elsewhere_waits_in_its_float(env: dict[str, Path]) -> None:
    out = run_scripted(env, "question_typing", [
        {"tool_calls": [{"name": "ask_user", "arguments": {
            "question": "Which file?", "options": ["a.txt", "b.txt"]}}]},
        {"tool_calls": [{"name": "ask_user", "arguments": {"question": "Favourite colour?"}}]},
        {"text": "Thanks, noted."},
    ])
    assert out["cur_is_code"]
    assert out["code"] == ["", "hello world"]  # the keys went where the user aimed them
    assert out["still_open"] and out["pending_after_typing"] == 1 and out["turns_after_typing"] == 0
    lines = out["float_lines"]
    assert lines[0] == "Which file?"
    assert lines[2:] == ["[1] a.txt", "[2] b.txt", "[3] Type an answer…", "[4] Decline to answer"]
    assert "1-4 choose" in out["footer"][0][0]
    assert out["focused"] and out["back_in_code"]
    assert "[1] Type an answer…" in out["float2_lines"]
    assert out["inputs"] == ["Favourite colour? "]
    calls = [c for n in out["history"]["nodes"] for c in n.get("toolCalls", [])]
    assert [c["output"] for c in calls] == ["b.txt", "teal"]
    assert out["pending"] == 0 and out["queue"] == 0
    assert "Thanks, noted." in joined(out["lines"])


def test_a_select_question_waits_until_the_user_is_idle(env: dict[str, Path]) -> None:
    out = run_scripted(env, "question_idle", [
        {"tool_calls": [{"name": "ask_user", "arguments": {
            "question": "Which file?", "options": ["a.txt", "b.txt"]}}]},
        {"text": "Thanks."},
    ])
    assert out["mode_typing"] == "i" and out["asked"]
    assert out["selects_while_typing"] == 0
    [sel] = out["selects"]
    assert sel["code"] == ["", "hello world"] and sel["mode"] == "n"
    assert out["code"] == ["", "hello world"]
    calls = [c for n in out["history"]["nodes"] for c in n.get("toolCalls", [])]
    assert [c["output"] for c in calls] == ["a.txt"]


def test_a_message_sent_before_initialize_is_queued_without_blocking(env: dict[str, Path]) -> None:
    # the installed command (exec, not a fork of a warm server): a real start
    out = run_scripted(env, "start_queue", [{"text": "Hello back."}], exec_server=True)
    assert not out["initialized_after_send"] and out["queued"] == 1
    assert "starting…" in out["winbar"]
    assert out["echo_while_starting"]
    assert out["queued_after"] == 0 and "starting…" not in out["winbar_after"]
    users = [n for n in out["history"]["nodes"] if n["role"] == "user"]
    assert [n["text"] for n in users] == ["hello before ready"]
    assert "Hello back." in joined(out["lines"])
