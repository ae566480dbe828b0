"""The Neovim plugin in a real headless Neovim against the real language server."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.editors.nvim import runner
from tests.tools.mcp.demo import demo_def

pytestmark = [
    pytest.mark.usefixtures("require_nvim"),
    pytest.mark.timeout(180),
]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Path]:
    """A workspace and a private OPENPROGRAM_HOME."""
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    return {"ws": ws, "home": home, "tmp": tmp_path}


def _run(env: dict[str, Path], name: str, responses: list[dict[str, Any]],
         **kw: Any) -> dict[str, Any]:
    model = runner.write_script(env["tmp"] / "script.json", responses)
    result: dict[str, Any] = runner.run_scenario(name, env["ws"], model=model, home=env["home"],
                                                 **kw)
    return result


def _text(lines: list[str]) -> str:
    return "\n".join(lines)


@pytest.mark.parametrize("as_010", [False, True], ids=["nvim-0.11-paths", "nvim-0.10-paths"])
def test_chat_with_approval_writes_file_and_streams_into_panel(
        env: dict[str, Path], as_010: bool) -> None:
    out = _run(env, "chat_approval", [
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
    text = _text(out["lines"])
    assert "## You" in text and "write hello.txt please" in text
    assert "I will write the file now." in text and "Done: hello.txt is written." in text
    assert any("hello.txt" in ln and "edit" in ln and "completed" in ln for ln in out["lines"])
    assert out["events"].count("text.delta") >= 2
    assert "tool.started" in out["events"] and "tool.finished" in out["events"]
    # The client declared the capability and passed the model as an initialization option.
    assert out["experimental"]["openprogram"] == {"permissions": True, "questions": True}
    assert out["init_options"]["model"].startswith("scripted:")
    assert out["input_buftype"] == "nofile"
    assert out["panel_windows"] == 1
    assert out["winbar"].startswith("OpenProgram · write hello.txt please")
    # The second message went through the prompt buffer, on the same session.
    text2 = _text(out["lines2"])
    assert "thanks" in text2 and "You are welcome." in text2
    assert text2.count("## You") == 2


def test_progress_reaches_lsp_progress(env: dict[str, Path]) -> None:
    out = _run(env, "chat_approval", [
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "hello.txt", "content": "x\n"}}]},
        {"text": "Done."},
        {"text": "Bye."},
    ])
    assert "begin" in out["progress"] and "end" in out["progress"]


def test_questions_through_vim_ui(env: dict[str, Path]) -> None:
    out = _run(env, "question", [
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
    text = _text(out["lines"])
    assert "Thanks, noted." in text
    # The answers show beside the tool calls in the panel.
    assert "Favourite colour? · think · completed → blue" in text
    assert "→ b.txt" in text


def test_fork_from_message_and_checkout(env: dict[str, Path]) -> None:
    out = _run(env, "fork_checkout", [
        {"text": "Answer one."},
        {"text": "Answer two."},
        {"text": "Answer forked."},
        {"text": "Answer edited."},
        {"text": "Answer new root."},
    ])
    before, forked = _text(out["before"]), _text(out["after_fork"])
    assert "Answer two." in before
    assert out["fork_prompt"]
    # The fork continues after "Answer one." and no longer shows the second exchange.
    assert "Answer one." in forked and "a different second question" in forked
    assert "Answer forked." in forked and "Answer two." not in forked
    # Checkout of the other branch redraws the panel with the original exchange.
    back = _text(out["after_checkout"])
    assert "Answer two." in back and "Answer forked." not in back
    assert len(out["branches"]["branches"]) == 2
    active = [b for b in out["branches"]["branches"] if b["active"]]
    assert active[0]["headId"] == out["picked"]
    # Forking on a user message replaces it: a sibling of "second question".
    edited = _text(out["after_edit"])
    assert "an edited second question" in edited and "Answer edited." in edited
    assert "second question\n" not in edited.replace("an edited second question", "")
    # Forking on the first message: openprogram/fork with fromNodeId null, a new root of the
    # same session.
    fork = out["root_fork"]
    assert fork["null"] is True and fork["params"]["text"] == "a new first question"
    assert fork["params"]["clientTurnId"].startswith("nvim-")
    assert out["root_session"] == out["session"]
    root = _text(out["after_root"])
    assert "a new first question" in root and "Answer new root." in root
    assert "Answer one." not in root
    nodes = out["root_history"]["nodes"]
    assert len(nodes) == 2 and nodes[0].get("predecessor") is None


def test_checkpoint_review_restore_and_undo(env: dict[str, Path]) -> None:
    out = _run(env, "checkpoints", [
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
    assert "before/notes.txt" in wins[0]["name"] and "after/notes.txt" in wins[1]["name"]
    # An added binary file: nothing before, a marker after.
    assert out["binary_windows"] == [[""], ["(binary file)"]]
    assert out["after_restore"] == "one\n"
    assert out["safety"] and out["safety"] in out["restore_message"]
    assert out["after_undo"] == "two\n"


def test_checkhealth_reports_server_model_and_nvim(env: dict[str, Path]) -> None:
    # the installed console script: its path, `--version` and `sandbox` as Neovim runs them
    out = _run(env, "health", [{"text": "unused"}], exec_server=True)
    report = _text(out["report"])
    assert "version: " in report and "openprogram" in report
    assert "model: scripted:" in report
    assert "Neovim 0.1" in report
    assert "sandbox on: bubblewrap at " in report  # CI installs bwrap: scripts/install-sandbox
    assert "ERROR" not in report
    bad = _text(out["bad_setting"])
    assert "sandbox` failed: openprogram-lsp: error: OPENPROGRAM_SANDBOX_NETWORK='maybe'" in bad


def test_mcp_approval_shows_server_tool_and_arguments_and_health_lists_it(
        env: dict[str, Path]) -> None:
    notes = env["tmp"] / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("keep me")
    servers = {"notes": demo_def(notes=notes, exec_server=True)}
    out = _run(env, "mcp", [
        {"tool_calls": [{"name": "mcp__notes__delete_note", "arguments": {"name": "a.txt"}}]},
        {"text": "It was not deleted."},
    ], extra_env={"OP_MCP": json.dumps(servers)})
    assert out["prompts"] == [
        'Allow MCP server notes, tool delete_note [delete] with {"name":"a.txt"}?']
    assert out["preview"][:3] == ["// MCP server: notes", "// tool: delete_note",
                                  "// arguments:"]
    assert '  "name": "a.txt"' in out["preview"]
    assert "MCP notes · delete_note" in out["winbar"]
    assert out["note_left"] == "keep me"  # rejected: nothing done
    report = _text(out["report"])
    assert "MCP servers" in report
    assert "notes (editor, stdio): ready" in report and "tool(s)" in report


def test_sessions_cancel_and_lsp_enable(env: dict[str, Path]) -> None:
    out = _run(env, "sessions_cancel", [
        {"text": "Hello from the first session."},
        {"text": "Once upon a time " * 40, "delay": 0.05},
        {"text": "Hello from the second session."},
    ])
    # vim.lsp.enable started the client; the panel reused it.
    assert out["clients"] == 1
    assert out["cancel_status"] == "cancelled"
    assert out["session_items"][0] == "+ New session"
    assert out["second"] != out["first"]
    assert out["back"] == out["first"]
    back = _text(out["back_lines"])
    assert "Hello from the first session." in back
    assert "Hello from the second session." not in back


def test_unanswered_approval_is_withdrawn(env: dict[str, Path]) -> None:
    out = _run(env, "withdraw", [
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "late.txt", "content": "late\n"}}]},
        {"text": "The write was not approved."},
    ])
    assert out["asked"] == 1
    assert out.get("file") is None
    assert out["pending_at_finish"] == 0  # withdrawn by $/cancelRequest, before the turn ended
    assert out["pending"] == 0 and not out["diff_open"]
    text = _text(out["lines"])
    assert "The write was not approved." in text
    assert "failed" in text


def test_server_exit_ends_the_turn_in_the_panel(env: dict[str, Path]) -> None:
    # a real exec: Neovim's forced stop signals the pid it holds, the server's own
    out = _run(env, "server_exit", [{"text": "slow " * 200, "delay": 0.05}], exec_server=True)
    assert out["busy"] is False
    assert "the server exited" in _text(out["lines"])


def test_missing_server_gives_a_clear_message(env: dict[str, Path]) -> None:
    out = _run(env, "no_server", [{"text": "unused"}])
    assert out["busy"] is False
    assert "server is not running" in _text(out["lines"])
    assert any("could not start" in n or "not executable" in n for n in out["notes"])
    report = _text(out["report"])
    assert "ERROR" in report and "/nonexistent/openprogram-lsp is not executable" in report


def test_client_turn_id_binds_the_panel_to_its_own_new_session(env: dict[str, Path]) -> None:
    out = _run(env, "client_turn_id", [
        {"text": "Alpha reply " * 6, "delay": 0.03},
        {"text": "Bravo reply " * 6, "delay": 0.03},
    ])
    other, mine = out["other"], out["result"]
    assert other["status"] == "done" and mine["status"] == "done"
    assert other["sessionId"] != mine["sessionId"]
    # Both turn.started events echo their request's clientTurnId.
    by_cid = {s["cid"]: s for s in out["started"]}
    assert by_cid["script-1"]["session"] == other["sessionId"]
    assert by_cid[out["sent_cid"]]["session"] == mine["sessionId"]
    assert out["sent_cid"].startswith("nvim-")
    # Bound at turn.started, while the request was still running, to the right session.
    bound = out["bound"]
    assert bound["busy"] is True
    assert bound["session"] == bound["event_session"] == mine["sessionId"] == out["session"]
    assert bound["turn"] == bound["event_turn"] == mine["assistantNodeId"]
    # Only the panel's own reply streamed into it.
    streamed = _text(out["streamed"])
    assert mine["text"].strip() in streamed
    assert other["text"].strip() not in streamed
    assert "the other chat" not in _text(out["lines"])


def test_withdrawn_event_closes_only_the_named_prompt(env: dict[str, Path]) -> None:
    out = _run(env, "withdraw_two", [
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
    assert "approval withdrawn (cancelled): Write a.txt" in _text(out["lines_at_finish"])
    assert "Write b.txt" not in _text(out["lines_at_finish"])


def test_steering_shows_where_the_model_saw_it(env: dict[str, Path]) -> None:
    out = _run(env, "steer", [
        {"text": "Looking at the files first.", "delay": 0.1,
         "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
        {"text": "Switching to tabs as asked."},
    ])
    [reply] = [n for n in out["history"]["nodes"] if n["role"] == "assistant"]
    assert reply["metadata"]["interjections"] == [
        {"beforeStep": 1, "kind": "steer", "text": "use tabs, not spaces"}]
    assert "steered: use tabs, not spaces" in _text(out["streamed"])
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
    out = _run(env, "subagents", [
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
    streamed1 = _text(out["streamed1"])
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
    assert out["follow"]["watching"] is True
    assert "follow-up" in out["follow"]["winbar"]
    streamed = _text(out["follow"]["streamed"])
    assert "## Follow-up" in streamed and "Thanks for the second report." in streamed
    assert "reported back as a follow-up turn" in streamed
    lines3 = out["lines3"]
    header = lines3.index(next(ln for ln in lines3 if ln.startswith("## Follow-up")))
    assert lines3[header + 1].startswith("[Agent second finished (done)")
    assert "second report: fine" in lines3[header:]
    assert lines3.index("Thanks for the second report.") > header
    # The subagents' own turns never streamed into the panel.
    assert "helper report: all good" not in _text(lines3).replace("> helper report: all good", "")
    roles = [(n["role"], (n.get("metadata") or {}).get("source")) for n in out["history"]["nodes"]]
    assert roles[-2:] == [("user", "follow_up"), ("assistant", "follow_up")]


def test_question_answered_elsewhere_closes_its_prompt(env: dict[str, Path]) -> None:
    out = _run(env, "question_elsewhere", [
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
    out = _run(env, "blocked", [
        {"text": "Running it.",
         "tool_calls": [{"name": "run_command", "arguments": {"command": "touch ran"}}]},
        {"text": "The hook refused it."}])
    assert not (env["ws"] / "ran").exists()
    assert any("failed → blocked: no shell today" in ln for ln in out["streamed"])
    assert any("failed → blocked: no shell today" in ln for ln in out["lines"])


def test_daily_use_input_layout_mode_and_quit(env: dict[str, Path]) -> None:
    out = _run(env, "daily", [
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


def test_session_browser_and_switching_while_a_turn_runs(env: dict[str, Path]) -> None:
    other = env["tmp"] / "elsewhere"
    other.mkdir()
    done = forkserver.run(["chat", "--workspace", str(other), "--model", "offline",
                           "from another folder"],
                          env={**os.environ, "OPENPROGRAM_HOME": str(env["home"])})
    assert done.returncode == 0, done.stderr
    out = _run(env, "sessions_browser", [
        {"text": "Alpha answer."},
        {"text": "Beta answer."},
        # ~1.7 s of streaming: it still runs while the panel switches and gamma's turn ends
        # (~0.1 s idle)
        {"text": "Once upon a time " * 16, "delay": 0.05},
        {"text": "Gamma answer."},
    ])
    here = _text(out["lines_here"])
    assert here.splitlines()[0] == "+ New session"
    assert "beta question" in here and "alpha question" in here
    assert "from another folder" not in here and "elsewhere" in str(out["title_here"])
    assert "beta question" in _text(out["lines_here"][1:2])  # newest first
    assert "You:" in out["preview"] and any("Beta answer." in x for x in out["preview"])
    everything = _text(out["lines_all"])
    assert "other workspaces" in everything
    other_line = next(x for x in out["lines_all"] if "from another folder" in x)
    assert "elsewhere" in other_line
    assert out["beta"] not in out["ids_after"] and out["alpha"] in out["ids_after"]
    assert not (env["home"] / "sessions" / out["beta"]).exists()
    assert out["title_opened"] == "Renamed alpha"
    # the message sent after switching started its own turn in a new session
    assert out["busy_after_switch"] is False
    assert out["gamma"] not in (out["alpha"], out["beta"])
    assert "Gamma answer." in _text(out["gamma_lines"])
    assert "could not steer" not in _text(out["gamma_lines"])
    assert out["alpha_last"]["status"] == "done"


def test_approval_float_never_takes_keystrokes_and_shows_the_whole_diff(
        env: dict[str, Path]) -> None:
    big = "".join(f"line {i}\n" for i in range(1, 26))
    out = _run(env, "approval_float", [
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "big.txt", "content": big}}]},
        {"text": "Done."},
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
    assert out["float_closed"] and out["queue"] == 0 and out.get("other") is None


def test_branch_labels_naming_hunk_review_and_deleted_buffers(env: dict[str, Path]) -> None:
    out = _run(env, "branches_hunks", [
        {"text": "Editing.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "code.py", "content": "one\nTWO\nthree\nfour\nfive\nSIX\nseven\n"}}]},
        {"text": "Edited."},
        {"text": "Then this."},
        {"text": "Fork one."},
        {"text": "Fork two."},
        {"text": "Adding.", "tool_calls": [{"name": "write_file", "arguments": {
            "path": "new.txt", "content": "fresh\n"}}]},
        {"text": "Added."},
    ])
    items = [x for x in out["branch_items"] if "Name or rename" not in x]
    assert len(items) == 3 and len(set(items)) == 3
    labels = [x.split(" · ")[0] for x in items]
    assert len(set(labels)) == 3  # the two "list ." forks read differently
    assert any("main" in x for x in labels)
    assert any("second try" in x for x in out["branch_items_after"])
    assert out["first_hunk_line"] == 2 and out["second_hunk_line"] == 6
    assert out["after_hunk"] == "one\nTWO\nthree\nfour\nfive\nsix\nseven\n"
    assert out["after_undo"] == "one\nTWO\nthree\nfour\nfive\nSIX\nseven\n"
    assert out["new_lines"] == ["fresh"]
    assert out["new_exists"] is False and out["new_buffer_valid"] is False


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
