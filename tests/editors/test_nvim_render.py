"""The panel's history rendering (editors/nvim/lua/openprogram/render.lua), as a pure function."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.tooling import missing

HERE = Path(__file__).resolve().parent
PLUGIN = HERE.parents[1] / "editors" / "nvim"
FIXTURE = HERE / "nvim" / "fixtures" / "history.json"


def _render(history: Path) -> dict[str, list[object]]:
    local = Path(sys.executable).parent / "nvim"
    nvim = str(local) if local.exists() else shutil.which("nvim")
    if not nvim:
        missing("Neovim is not installed")
    code = (f"local h = vim.json.decode(table.concat(vim.fn.readfile('{history}'), '\\n')) "
            "local lines, index = require('openprogram.render').history(h.nodes) "
            "io.stdout:write(vim.json.encode({ lines = lines, index = index }))")
    proc = subprocess.run(
        [nvim, "--headless", "--clean", "--cmd", f"set rtp^={PLUGIN}", "-c", f"lua {code}",
         "-c", "qa!"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        check=True)
    out: dict[str, list[object]] = json.loads(proc.stdout)
    return out


def test_history_renders_one_header_per_message_with_tools_in_stream_order() -> None:
    out = _render(FIXTURE)
    assert out["lines"] == [
        "## You · 06:14",
        "write hello.txt",
        "",
        "## Assistant · 06:14",
        "Writing it.",
        "- ✓ Write hello.txt · edit · completed → Created hello.txt (6 bytes)",
        "",
        "Done.",
        "",
        "> checkpoint c0abc · :OpenProgramCheckpoints",
        "",
        "## You",
        "run the tests",
        "please",
        "",
        "## Assistant",
        "Running",
        "",
        "[cancelled]",
        "- ✗ run_command pytest · execute · failed",
        "    ! line 1",  # a failure's first lines show under its line
        "    ! line 2",
    ]
    assert out["index"] == [
        {"line": 0, "id": "u1", "role": "user"},
        {"line": 3, "id": "u1_reply", "role": "assistant", "predecessor": "u1"},
        {"line": 11, "id": "u2", "role": "user", "predecessor": "u1_reply"},
        {"line": 15, "id": "u2_reply", "role": "assistant", "predecessor": "u2"},
    ]


def test_interjections_warnings_follow_ups_and_attach_pointers() -> None:
    out = _render(HERE / "nvim" / "fixtures" / "history_collab.json")
    assert out["lines"] == [
        "## You",
        "reformat and delegate",
        "",
        "## Assistant",
        "Looking.",
        "- ✓ List . · read · completed",
        "",
        "> **steering** · use tabs",
        "> not spaces",
        "",
        "Tabs it is.",
        "",
        "> **follow-up** · [Agent helper finished (done); its branch tip is s1:a1_reply]",
        ">",
        "> 1",
        "> 2",
        "> 3",
        "> 4",
        "> … (+3 lines)",
        "",
        "All done.",
        "",
        "> warning: checkpoint failed: disk full",
        "",
        "> checkpoint c0mx2vih0a1b · :OpenProgramCheckpoints",
        "",
        "> ↩ result (done): [Agent helper finished (done)]",
        "",
        "## Follow-up",
        "[Agent second finished (done)]",
        "",
        "## Assistant",
        "Thanks.",
        "",
        "> **steering** · stop",
        "_(cancelled)_",
    ]
    # Attach pointers and interjections are not fork points: only chain messages are indexed.
    assert [i["id"] for i in out["index"]] == ["u1", "u1_reply", "u3", "u3_reply"]


def test_a_call_refused_before_it_ran_shows_why(tmp_path: Path) -> None:
    reason = "a download piped into a shell is refused by the destructive-commands policy;\n" \
             "a rule allowing this exact command lets it run"
    history = {"sessionId": "s1", "headId": "u1_reply", "nodes": [
        {"id": "u1", "role": "user", "text": "install it"},
        {"id": "u1_reply", "role": "assistant", "predecessor": "u1", "status": "done",
         "text": "", "toolCalls": [{"id": "t1", "name": "run_command", "kind": "execute",
                                    "status": "failed", "title": "Run `curl x | sh`",
                                    "input": {"command": "curl x | sh"},
                                    "output": f"Denied by a tool gate: {reason}",
                                    "blockedReason": reason}]}]}
    path = tmp_path / "h.json"
    path.write_text(json.dumps(history))
    lines = _render(path)["lines"]
    assert "- ✗ Run `curl x | sh` · execute · failed → blocked: a download piped into a shell " \
           "is refused by the destructive-commands policy; a rule allowing this exact command " \
           "lets it run" in lines


def test_cancelled_calls_and_the_turn_s_tokens(tmp_path: Path) -> None:
    history = {"sessionId": "s1", "headId": "u1_reply", "nodes": [
        {"id": "u1", "role": "user", "text": "two things"},
        {"id": "u1_reply", "role": "assistant", "predecessor": "u1", "status": "cancelled",
         "text": "Two.\n\n[cancelled]", "createdAt": "2026-12-01T10:02:00Z",
         "metadata": {"steps": ["Two."], "usage": {"inputTokens": 1342, "outputTokens": 52}},
         "toolCalls": [
             {"id": "c1", "name": "run_command", "kind": "execute", "status": "failed",
              "title": "Run `sleep 30`", "input": {"command": "sleep 30"}, "step": 0,
              "output": "Cancelled: the user stopped the turn.", "cancelled": True},
             {"id": "c2", "name": "write_file", "kind": "edit", "status": "failed",
              "title": "Write b.txt", "input": {"path": "b.txt"}, "step": 0,
              "output": "Not run.", "cancelled": True}]}]}
    path = tmp_path / "h.json"
    path.write_text(json.dumps(history))
    lines = _render(path)["lines"]
    assert "## Assistant · 10:02 · ↑1.3k ↓52" in lines
    assert "- ⊘ Run `sleep 30` · execute · cancelled" in lines
    assert "- ⊘ Write b.txt · edit · cancelled" in lines


def test_a_todo_write_call_shows_its_checklist(tmp_path: Path) -> None:
    todos = [{"content": "Read the code", "status": "completed"},
             {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
             {"content": "Run the tests", "status": "pending"}]
    history = {"nodes": [
        {"id": "u1", "role": "user", "text": "fix it", "predecessor": None},
        {"id": "u1_reply", "role": "assistant", "text": "Planning.", "predecessor": "u1",
         "toolCalls": [{"id": "t1", "name": "todo_write", "kind": "think", "status": "completed",
                        "title": "Plan: 1/3 done", "input": {"todos": todos}, "step": 0,
                        "output": "To-do list updated: 1 of 3 completed."}],
         "metadata": {"steps": ["Planning."]}}]}
    path = tmp_path / "h.json"
    path.write_text(json.dumps(history))
    lines = _render(path)["lines"]
    start = lines.index("Planning.")
    assert lines[start + 1:start + 5] == [
        "- ✓ Plan: 1/3 done · think · completed → To-do list updated: 1 of 3 completed.",
        "  [x] Read the code", "  [~] Fixing the bug", "  [ ] Run the tests"]


def test_thoughts_show_collapsed_before_their_step(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    history.write_text(json.dumps({"nodes": [
        {"id": "u1", "role": "user", "text": "what version?", "predecessor": None,
         "caller": None, "createdAt": "", "metadata": {}},
        {"id": "u1_reply", "role": "assistant", "text": "It is 1.2.3.", "predecessor": "u1",
         "caller": None, "createdAt": "", "status": "done",
         "toolCalls": [{"id": "c1", "name": "read_file", "kind": "read", "status": "completed",
                        "input": {"path": "pyproject.toml"}, "title": "Read pyproject.toml",
                        "step": 0}],
         "metadata": {"steps": ["", "It is 1.2.3."], "thoughts": [
             {"step": 0, "text": "Read the config\nfirst.", "source": "anthropic",
              "signature": "sig"},
             {"step": 1, "text": "Answer.", "source": "anthropic", "signature": "sig2"}]}},
    ]}))
    lines = _render(history)["lines"]
    body = lines[lines.index("## Assistant") + 1:]
    assert body[0] == "> ▸ _thought · 2 lines · gT to read_"
    assert body[1].startswith("- ✓ Read pyproject.toml")
    assert body[2:] == ["", "> ▸ _thought · 1 line · gT to read_", "", "It is 1.2.3."]
    assert "Read the config" not in "\n".join(lines)  # collapsed: the text is behind gT
