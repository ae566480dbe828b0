"""Our tools as Claude Code's hooks see them: names, ``tool_input``, ``tool_response``.

The one mapping table (``TOOLS``, documented in docs/hooks.md). A hook receives Claude
Code's tool name and fields (``Bash`` with ``command``, ``Edit`` with an absolute
``file_path`` and ``old_string``/``new_string``, ...) and ours beside them
(``openprogram_tool_name``, ``openprogram_tool_input``); a PreToolUse ``updatedInput`` in
either spelling is read back into our arguments (``our_input``). Tools without a Claude Code
counterpart (``list_dir`` aside, ``send_message``, ``list_agents``) keep our names and fields;
MCP tools are ``mcp__<server>__<tool>`` in both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Args = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolMap:
    """One tool's Claude Code name, other names it answers to, and its field renames."""

    claude: str
    aliases: tuple[str, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()  # (ours, Claude Code's), besides the path ones
    path: str | None = None  # our path argument shown as an absolute path, under this name
    path_default: str | None = None  # our default when the argument is absent
    response: Callable[[str, bool, Args, Args], Args] | None = None


def _after_exit_line(text: str) -> str:
    """A run's output without our leading ``exit code N`` line and trailing notes."""
    body = re.sub(r"\Aexit code -?\d+\n?", "", text)
    return re.sub(r"\n\[(?:sandboxed|not sandboxed)[^\n]*\]\Z", "", body)


def _bash(text: str, ok: bool, args: Args, claude: Args) -> Args:
    out: Args = {"stdout": _after_exit_line(text), "stderr": "",
                 "interrupted": "[killed after" in text, "isImage": False}
    if args.get("background") is True:
        match = re.search(r"background as (\S+?)[.;]", text)
        if match:
            out["backgroundTaskId"] = match.group(1)
    return out


def _write(text: str, ok: bool, args: Args, claude: Args) -> Args:
    return {"type": "update" if text.startswith("Updated") else "create",
            "filePath": claude.get("file_path"), "content": args.get("content"),
            "success": ok}


def _edit(text: str, ok: bool, args: Args, claude: Args) -> Args:
    out: Args = {"filePath": claude.get("file_path"), "success": ok}
    for key in ("old_string", "new_string", "replace_all", "edits"):
        if key in claude:
            out[{"old_string": "oldString", "new_string": "newString",
                 "replace_all": "replaceAll"}.get(key, key)] = claude[key]
    return out


def _read(text: str, ok: bool, args: Args, claude: Args) -> Args:
    lines = [re.sub(r"\A\s*\d+\t", "", line) for line in text.splitlines()
             if re.match(r"\A\s*\d+\t", line)]
    return {"type": "text", "file": {"filePath": claude.get("file_path"),
                                     "content": "\n".join(lines), "numLines": len(lines),
                                     "startLine": args.get("offset") or 1}}


def _grep(text: str, ok: bool, args: Args, claude: Args) -> Args:
    mode = args.get("output_mode") or "files_with_matches"
    body = [ln for ln in text.splitlines() if ln and not ln.startswith("[")]
    if body == ["no matches"]:
        body = []
    out: Args = {"mode": mode, "numFiles": 0, "filenames": []}
    if mode == "files_with_matches":
        out.update(numFiles=len(body), filenames=body)
    else:
        out.update(content="\n".join(body), numLines=len(body))
    return out


def _glob(text: str, ok: bool, args: Args, claude: Args) -> Args:
    names = [ln for ln in text.splitlines() if ln and not ln.startswith("[")]
    return {"filenames": names, "numFiles": len(names), "truncated": "more" in text}


def _fetch(text: str, ok: bool, args: Args, claude: Args) -> Args:
    match = re.search(r"\b(\d{3})\b", text.split("\n", 1)[0])
    return {"url": args.get("url"), "result": text, "bytes": len(text.encode()),
            "code": int(match.group(1)) if match else None}


def _todos(text: str, ok: bool, args: Args, claude: Args) -> Args:
    return {"newTodos": claude.get("todos", [])}


def _output(text: str, ok: bool, args: Args, claude: Args) -> Args:
    return {"stdout": text, "stderr": "", "shellId": args.get("id")}


def _kill(text: str, ok: bool, args: Args, claude: Args) -> Args:
    return {"message": text, "shell_id": args.get("id")}


def _task(text: str, ok: bool, args: Args, claude: Args) -> Args:
    return {"content": [{"type": "text", "text": text}]}


TOOLS: dict[str, ToolMap] = {
    "run_command": ToolMap("Bash", fields=(("command", "command"), ("timeout", "timeout"),
                                           ("description", "description"),
                                           ("background", "run_in_background")),
                           response=_bash),
    "read_file": ToolMap("Read", fields=(("offset", "offset"), ("limit", "limit")),
                         path="file_path", response=_read),
    "write_file": ToolMap("Write", fields=(("content", "content"),), path="file_path",
                          response=_write),
    "edit_file": ToolMap("Edit", fields=(("old_text", "old_string"), ("new_text", "new_string"),
                                         ("replace_all", "replace_all")),
                         path="file_path", response=_edit),
    "multi_edit": ToolMap("MultiEdit", fields=(("edits", "edits"),), path="file_path",
                          response=_edit),
    "grep": ToolMap("Grep", fields=(("pattern", "pattern"), ("glob", "glob"), ("type", "type"),
                                    ("output_mode", "output_mode"), ("case_insensitive", "-i"),
                                    ("context", "-C"), ("before", "-B"), ("after", "-A"),
                                    ("multiline", "multiline"), ("head_limit", "head_limit"),
                                    ("offset", "offset")),
                    path="path", path_default=".", response=_grep),
    "find_files": ToolMap("Glob", fields=(("pattern", "pattern"),), path="path",
                          path_default=".", response=_glob),
    "list_dir": ToolMap("LS", path="path", path_default="."),
    "agent": ToolMap("Task", aliases=("Agent",),
                     fields=(("prompt", "prompt"), ("label", "description"),
                             ("agent", "subagent_type")), response=_task),
    "web_fetch": ToolMap("WebFetch", fields=(("url", "url"),), response=_fetch),
    "todo_write": ToolMap("TodoWrite", fields=(("todos", "todos"),), response=_todos),
    "command_output": ToolMap("BashOutput", aliases=("TaskOutput",),
                              fields=(("id", "bash_id"),), response=_output),
    "command_stop": ToolMap("KillShell", aliases=("KillBash", "TaskStop"),
                            fields=(("id", "shell_id"),), response=_kill),
    "ask_user": ToolMap("AskUserQuestion", fields=(("question", "question"),
                                                   ("options", "options"))),
}
_OUR_EDIT = (("old_text", "old_string"), ("new_text", "new_string"),
             ("replace_all", "replace_all"))


def claude_name(tool: str) -> str:
    """The name Claude Code's hooks know the tool by (our own when it has none)."""
    found = TOOLS.get(tool)
    return found.claude if found is not None else tool


def names_of(tool: str) -> tuple[str, ...]:
    """Every name a matcher may select the tool by: ours, Claude Code's, older ones."""
    found = TOOLS.get(tool)
    return (tool,) if found is None else (tool, found.claude, *found.aliases)


def _absolute(path: str, workspace: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(workspace, path))


def _relative(path: str, workspace: str) -> str:
    """An absolute path inside the workspace as ours (relative); anything else as it is
    (the tool's own confinement refuses what lies outside)."""
    if not os.path.isabs(path):
        return path
    root = workspace.rstrip("/") or "/"
    norm = os.path.normpath(path)
    if norm == root:
        return "."
    if norm.startswith(root + "/"):
        return norm[len(root) + 1:]
    return path


def _edits(edits: Any, pairs: tuple[tuple[str, str], ...], *, to_claude: bool) -> Any:
    if not isinstance(edits, list):
        return edits
    out = []
    for edit in edits:
        if not isinstance(edit, Mapping):
            out.append(edit)
            continue
        moved = {(c if to_claude else o): edit[o if to_claude else c] for o, c in pairs
                 if (o if to_claude else c) in edit}
        if not to_claude:  # our own spelling in an updatedInput is read too
            moved.update({o: edit[o] for o, _ in pairs if o in edit and o not in moved})
        out.append(moved)
    return out


def _todo_list(todos: Any) -> Any:
    """Our todos as Claude Code's (``activeForm`` always present, as there)."""
    if not isinstance(todos, list):
        return todos
    return [{**t, "activeForm": t.get("activeForm") or t.get("content")}
            if isinstance(t, Mapping) else t for t in todos]


def claude_input(tool: str, arguments: Args, workspace: str) -> Args:
    """The call's arguments as Claude Code's ``tool_input`` (absolute paths)."""
    found = TOOLS.get(tool)
    if found is None:
        return dict(arguments)
    out: Args = {}
    if found.path is not None:
        raw = arguments.get("path", found.path_default)
        if isinstance(raw, str):
            out[found.path] = _absolute(raw, workspace)
    for ours, theirs in found.fields:
        if ours in arguments:
            out[theirs] = arguments[ours]
    if tool == "multi_edit":
        out["edits"] = _edits(arguments.get("edits"), _OUR_EDIT, to_claude=True)
    if tool == "todo_write":
        out["todos"] = _todo_list(arguments.get("todos"))
    if tool == "web_fetch":
        out.setdefault("prompt", "")  # we return the page itself; no model reads it for us
    return out


def our_input(tool: str, updated: Mapping[str, Any], original: Args, workspace: str) -> Args:
    """A PreToolUse ``updatedInput`` as our arguments. Claude Code's spelling and ours are
    both read; a field the hook left out keeps its original value (Claude Code's hooks
    usually echo the whole input, but a partial one must not drop, say, ``old_text``)."""
    found = TOOLS.get(tool)
    out = dict(original)
    if found is None:
        out.update(updated)
        return out
    if found.path is not None:
        for key in (found.path, "path"):
            value = updated.get(key)
            if isinstance(value, str):
                out["path"] = _relative(value, workspace)
                break
    for ours, theirs in found.fields:
        if theirs in updated:
            out[ours] = updated[theirs]
        elif ours in updated:
            out[ours] = updated[ours]
    if tool == "multi_edit" and "edits" in updated:
        out["edits"] = _edits(updated["edits"], _OUR_EDIT, to_claude=False)
    return out


def claude_response(tool: str, output: str, ok: bool, arguments: Args,
                    workspace: str) -> Args:
    """``tool_response`` with Claude Code's fields for the tool, ours beside them
    (``output``, ``success``) so hooks written for either read what they expect."""
    found = TOOLS.get(tool)
    base: Args = {"output": output, "success": ok}
    if found is None or found.response is None:
        return base
    shaped = found.response(output, ok, arguments, claude_input(tool, arguments, workspace))
    return {**base, **shaped}
