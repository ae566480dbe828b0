"""The mapping of our tools to Claude Code's names, tool_input and tool_response."""

from __future__ import annotations

import pytest

from openprogram_lsp.tools.builtin.descriptions import DESCRIPTIONS
from openprogram_lsp.tools.claude_tools import (
    TOOLS,
    claude_input,
    claude_name,
    claude_response,
    names_of,
    our_input,
)

WS = "/ws"


@pytest.mark.parametrize(("tool", "args", "expected"), [
    ("run_command", {"command": "ls", "timeout": 5, "description": "list", "background": True},
     {"command": "ls", "timeout": 5, "description": "list", "run_in_background": True}),
    ("read_file", {"path": "a/b.py", "offset": 3, "limit": 4},
     {"file_path": "/ws/a/b.py", "offset": 3, "limit": 4}),
    ("write_file", {"path": "./n.txt", "content": "x"}, {"file_path": "/ws/n.txt", "content": "x"}),
    ("edit_file", {"path": "a.py", "old_text": "x", "new_text": "y", "replace_all": True},
     {"file_path": "/ws/a.py", "old_string": "x", "new_string": "y", "replace_all": True}),
    ("multi_edit", {"path": "a.py", "edits": [{"old_text": "x", "new_text": "y"}]},
     {"file_path": "/ws/a.py", "edits": [{"old_string": "x", "new_string": "y"}]}),
    ("grep", {"pattern": "TODO", "glob": "*.py", "case_insensitive": True, "context": 2,
              "output_mode": "content", "head_limit": 5},
     {"pattern": "TODO", "path": "/ws", "glob": "*.py", "-i": True, "-C": 2,
      "output_mode": "content", "head_limit": 5}),
    ("find_files", {"pattern": "**/*.ts", "path": "src"},
     {"pattern": "**/*.ts", "path": "/ws/src"}),
    ("agent", {"prompt": "do it", "label": "fixer", "agent": "reviewer"},
     {"prompt": "do it", "description": "fixer", "subagent_type": "reviewer"}),
    ("web_fetch", {"url": "http://127.0.0.1/x"}, {"url": "http://127.0.0.1/x", "prompt": ""}),
    ("todo_write", {"todos": [{"content": "a", "status": "pending"}]},
     {"todos": [{"content": "a", "status": "pending", "activeForm": "a"}]}),
    ("command_output", {"id": "bg1"}, {"bash_id": "bg1"}),
    ("command_stop", {"id": "bg1"}, {"shell_id": "bg1"}),
    ("mcp__notes__add", {"text": "x"}, {"text": "x"}),
])
def test_claude_input_per_tool(tool: str, args: dict, expected: dict) -> None:
    assert claude_input(tool, args, WS) == expected


@pytest.mark.parametrize(("tool", "name"), [
    ("run_command", "Bash"), ("read_file", "Read"), ("write_file", "Write"),
    ("edit_file", "Edit"), ("multi_edit", "MultiEdit"), ("grep", "Grep"),
    ("find_files", "Glob"), ("agent", "Task"), ("web_fetch", "WebFetch"),
    ("todo_write", "TodoWrite"), ("command_output", "BashOutput"),
    ("command_stop", "KillShell"), ("mcp__notes__add", "mcp__notes__add"),
    ("send_message", "send_message"),
])
def test_claude_names(tool: str, name: str) -> None:
    assert claude_name(tool) == name
    assert names_of(tool)[:2] == ((tool, name) if name != tool else (tool,))


def test_every_mapped_tool_is_a_real_tool() -> None:
    assert set(TOOLS) <= set(DESCRIPTIONS) | {"agent", "ask_user"}


def test_updated_input_is_read_back_in_either_spelling_and_keeps_what_was_left_out() -> None:
    original = {"path": "a.py", "old_text": "x", "new_text": "y"}
    assert our_input("edit_file", {"file_path": "/ws/sub/b.py", "new_string": "z"}, original,
                     WS) == {"path": "sub/b.py", "old_text": "x", "new_text": "z"}
    assert our_input("edit_file", {"new_text": "q"}, original, WS)["new_text"] == "q"
    # a path outside the workspace stays absolute: the tool's confinement refuses it
    assert our_input("write_file", {"file_path": "/etc/passwd", "content": "x"},
                     {"path": "a", "content": "y"}, WS)["path"] == "/etc/passwd"
    assert our_input("run_command", {"command": "ls -la", "run_in_background": False},
                     {"command": "ls"}, WS) == {"command": "ls -la", "background": False}
    assert our_input("multi_edit", {"edits": [{"old_string": "a", "new_string": "b"}]},
                     {"path": "f", "edits": []}, WS)["edits"] == [
        {"old_text": "a", "new_text": "b"}]
    assert our_input("grep", {"pattern": "x", "-i": True, "path": "/ws"},
                     {"pattern": "y"}, WS) == {"pattern": "x", "case_insensitive": True,
                                                "path": "."}


def test_tool_responses_carry_claude_codes_fields_and_ours() -> None:
    bash = claude_response("run_command", "exit code 0\nhello\n[sandboxed: bubblewrap]", True,
                           {"command": "echo hello"}, WS)
    assert bash["stdout"] == "hello" and bash["stderr"] == "" and bash["interrupted"] is False
    assert bash["output"].startswith("exit code 0") and bash["success"] is True
    killed = claude_response("run_command", "x\n[killed after 2 s timeout]", False,
                             {"command": "sleep 9"}, WS)
    assert killed["interrupted"] is True and killed["success"] is False
    edit = claude_response("edit_file", "Edited a.py", True,
                           {"path": "a.py", "old_text": "x", "new_text": "y"}, WS)
    assert edit["filePath"] == "/ws/a.py" and edit["success"] is True
    assert edit["oldString"] == "x" and edit["newString"] == "y"
    read = claude_response("read_file", "     1\tone\n     2\ttwo\n", True, {"path": "r.txt"},
                           WS)
    assert read["file"] == {"filePath": "/ws/r.txt", "content": "one\ntwo", "numLines": 2,
                            "startLine": 1}
    grep = claude_response("grep", "a.py\nb.py", True,
                           {"pattern": "x", "output_mode": "files_with_matches"}, WS)
    assert grep["filenames"] == ["a.py", "b.py"] and grep["numFiles"] == 2
    glob = claude_response("find_files", "a.ts\n[3 more files left out]", True,
                           {"pattern": "*.ts"}, WS)
    assert glob["filenames"] == ["a.ts"] and glob["truncated"] is True
    assert claude_response("mcp__x__y", "out", True, {}, WS) == {"output": "out",
                                                                 "success": True}
