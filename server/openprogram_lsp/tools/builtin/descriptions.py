"""What each built-in tool tells the model: when to use it and how (one place, so the system
prompt can refer to them and a change to a tool's limits changes its words beside them).
A model with a small window gets each one's first sentence (``ToolRegistry.brief``)."""

from __future__ import annotations

from typing import Final

READ_PAGE_LINES: Final = 2_000  # read_file's default page
READ_LINE_CHARS: Final = 2_000  # longer lines are cut
READ_PAGE_BYTES: Final = 100 * 1024  # at most this much text per read_file call
GREP_HEAD_LIMIT: Final = 250  # grep's default number of result lines
FIND_LIMIT: Final = 200  # find_files' default number of paths
COMMAND_TIMEOUT: Final = 120.0  # run_command's default timeout, seconds
COMMAND_MAX_TIMEOUT: Final = 600.0
FETCH_MAX_BYTES: Final = 5 * 1024 * 1024  # web_fetch reads at most this much of a body
FETCH_MAX_CHARS: Final = 100_000  # and returns at most this much text

READ_FILE: Final = f"""\
Read a file of the workspace. The result is numbered like `cat -n`: each line is its 1-based \
line number, a tab, then the line's text (the number and tab are not part of the file: never \
copy them into edit_file's old_text). By default the first {READ_PAGE_LINES:,} lines are \
returned; a longer file ends with a note giving the total number of lines and the `offset` to \
read on from. Use `offset` (the first line to read, 1-based) and `limit` (how many lines) to \
read part of a large file, typically after grep told you the line numbers you need; reading \
the whole of a big file wastes context. Lines longer than {READ_LINE_CHARS:,} characters are \
cut, and one call returns at most about {READ_PAGE_BYTES // 1024} KB. A PNG, JPEG, GIF or WebP \
image is shown to you as an image when you can see images; other binary files are described \
(type, size), not shown. Read a file before editing it. When \
the editor holds unsaved changes to the file you get the editor's text and a note saying so. \
Paths are relative to the workspace root."""

LIST_DIR: Final = """\
List one directory of the workspace (not recursive): directories end with '/', names are \
sorted, and at most 500 entries are shown. Use it to see a folder's layout before reading or \
creating files in it. To find files by name anywhere below a folder use find_files, and to find \
text inside files use grep."""

FIND_FILES: Final = f"""\
Find files by glob pattern, e.g. `**/*.py`, `src/**/test_*.ts` or `*.{{md,rst}}` (`*` stays \
inside one directory, `**` crosses directories, `{{a,b}}` is either). Patterns are matched \
against paths relative to `path` (default: the workspace root); a pattern without a '/' \
matches a file name at any depth. Files ignored by .gitignore/.ignore, the .git folder and \
dependency caches such as node_modules are left out. Results are sorted by modification time, \
newest first, so recently changed files come first; at most `limit` paths are returned \
(default {FIND_LIMIT}) with a note of how many were left out. Use it instead of run_command \
with `find` or `ls -R`; to search file contents use grep."""

GREP: Final = f"""\
Search file contents with a regular expression (ripgrep: Rust regex syntax, linear time, no \
backreferences or look-around; escape literal braces and dots, e.g. `fn \\{{` or `a\\.b`). \
Files ignored by .gitignore and binary files are skipped. Choose `output_mode`: \
"content" (default) prints matching lines as `path:line: text` (with `context`, `before` or \
`after` lines around each match, printed as `path-line- text`, groups separated by `--`), \
"files_with_matches" lists only the files that match, "count" prints `path:matches`. Narrow \
the search with `path` (a file or folder), `glob` (e.g. `*.py`, `src/**/*.ts`, \
`*.{{ts,tsx}}`, or `!*.md` to leave files out) or `type` (ripgrep's file types: py, js, ts, \
rust, go, java, c, cpp, md, ...), set `multiline` for a pattern that spans lines, and set \
`case_insensitive` when case does not matter. Results are sorted by path, then line. At most \
`head_limit` result lines are returned (default {GREP_HEAD_LIMIT}); the result then says how \
many were left out, and `offset` skips that many lines to page on. Use grep to find where \
something is defined or used, then read_file with offset/limit to read just that part; use it \
instead of running grep or rg through run_command."""

WRITE_FILE: Final = """\
Create a file, or replace a whole file, with the given content. Parent folders are created. \
Prefer edit_file or multi_edit to change part of an existing file: they are smaller, show a \
precise diff and cannot drop content by accident. Read an existing file before overwriting it. \
The user may be asked to approve the change."""

EDIT_FILE: Final = """\
Replace exact text in a file: `old_text` must match the file character for character, \
indentation and line breaks included (copy it from read_file's output without the line-number \
prefix). It must occur exactly once unless `replace_all` is true, which replaces every \
occurrence (useful to rename a variable within a file). If old_text is not found or is not \
unique the call fails and nothing changes: read the file again, then include a few more \
surrounding lines to make it unique. Keep edits small and exact. To make several changes to \
one file at once use multi_edit; to create a file use write_file. The user may be asked to \
approve the change."""

MULTI_EDIT: Final = """\
Make several exact replacements in one file in one call, applied in order and atomically: \
either every edit applies or the file is left unchanged. Each edit is {old_text, new_text, \
replace_all?} with the same rules as edit_file, and each sees the file as the edits before it \
left it (so an edit must not expect text an earlier edit removed). Prefer it over several \
edit_file calls on the same file: the user approves the whole change as one diff. Read the \
file first."""

RUN_COMMAND: Final = f"""\
Run a shell command (`/bin/sh -c`) with the workspace as working directory and return its \
exit code and output (stdout and stderr together; a long output keeps its beginning and end). \
It runs in a sandbox where only the workspace and a private /tmp are writable, and may need the \
user's approval. `timeout` is in seconds (default {COMMAND_TIMEOUT:g}, at most \
{COMMAND_MAX_TIMEOUT:g}; a larger number is taken as milliseconds); the command and \
everything it started are killed when it runs out. For a server, a watcher or anything that \
runs longer, set `background: true`: the call returns an id at once and the command keeps \
running; read its new output with command_output and end it with command_stop. Give a short \
`description` of what the command does. Use it to run tests, builds, linters and git; prefer \
read_file, find_files and grep over cat, find and grep in the shell. Each call starts a fresh \
shell: `cd` and variables do not carry over, so chain dependent steps with `&&`."""

COMMAND_OUTPUT: Final = """\
Read what a background command (started by run_command with `background: true`) printed since \
the last command_output call for it, with its status: running, or exited with its exit code. \
Call it again later to see more; it returns at once and never waits for the command. Output \
beyond the buffer's size is dropped from the middle, with a note."""

COMMAND_STOP: Final = """\
Stop a background command started by run_command with `background: true`: the command and \
every process it started are killed. Returns its last output and exit status. Stop servers \
and watchers you started once you no longer need them."""

TODO_WRITE: Final = """\
Keep a to-do list for the current task, shown live to the user as a checklist. Use it for \
work of three or more steps, or when the user gives several tasks: write the list when you \
start, then update it as you go. Each call replaces the whole list: send every item each \
time, each with `content` (what to do, imperative: "Run the tests"), `status` (pending, \
in_progress or completed) and optionally `activeForm` (the same step as an ongoing action: \
"Running the tests"). Keep exactly one item in_progress while you work, mark an item \
completed as soon as it is done (not in batches at the end), and add items you discover. \
Skip it for a single small step."""

WEB_FETCH: Final = f"""\
Fetch a web page or file by HTTP(S) GET and return it as text: HTML is converted to \
Markdown (`format`: "markdown", the default, "text" for plain text without markup, or "html" \
for the raw page); JSON and other text come back as they are. Binary content is described, \
not shown. At most {FETCH_MAX_BYTES // (1024 * 1024)} MB is downloaded and about \
{FETCH_MAX_CHARS:,} characters returned (the result says when it was cut). Redirects are \
followed. The user may be asked to approve each host, and when the sandbox allows no network \
the call is refused. Use it to read documentation, an issue or an API's answer the user \
pointed to; it cannot log in or send data."""

DESCRIPTIONS: Final[dict[str, str]] = {
    "read_file": READ_FILE, "list_dir": LIST_DIR, "find_files": FIND_FILES, "grep": GREP,
    "write_file": WRITE_FILE, "edit_file": EDIT_FILE, "multi_edit": MULTI_EDIT,
    "run_command": RUN_COMMAND, "command_output": COMMAND_OUTPUT,
    "command_stop": COMMAND_STOP, "todo_write": TODO_WRITE, "web_fetch": WEB_FETCH,
}

NAV_MAX_RESULTS: Final = 100  # locations or symbols listed by a navigation tool
NAV_HOVER_CHARS: Final = 4_000

_NAV_POSITION = (
    "Name the symbol by `path`, its 1-based `line` (as read_file numbers it) and `symbol`, the "
    "identifier as written on that line (its first whole-word occurrence there is used).")

LSP_DEFINITION: Final = f"""\
Find where a symbol is defined, as the editor's language servers resolve it (imports, \
overloads, re-exports followed). Prefer it to grepping for `def name` or `class Name` when you \
know a place the symbol is used. {_NAV_POSITION} Returns `path:line:column: text` for each \
definition; a definition outside the workspace (a library) is given as its path only."""

LSP_REFERENCES: Final = f"""\
List every reference to a symbol across the workspace, as the editor's language servers find \
them: calls, imports and uses, not mere text matches (so no false hits from comments or other \
symbols of the same name). Use it before renaming or changing a function's signature, to find \
every caller. {_NAV_POSITION} Returns `path:line:column: text` per reference, the declaration \
included, at most {NAV_MAX_RESULTS}; places outside the workspace are given as paths only."""

LSP_HOVER: Final = f"""\
Show what the editor's language servers know of a symbol: its type or signature and its \
documentation (as an editor shows on hover). Cheaper than reading a library's source to learn \
what a function takes and returns. {_NAV_POSITION} At most {NAV_HOVER_CHARS:,} characters."""

LSP_DOCUMENT_SYMBOLS: Final = f"""\
Outline a file: its classes, functions, methods, variables and so on, nested, each with its \
line, as the editor's language servers see them. Use it to find your way in a large file \
before reading the part you need. Takes the file's `path`; at most {NAV_MAX_RESULTS} symbols."""

LSP_WORKSPACE_SYMBOLS: Final = f"""\
Find symbols (classes, functions, …) by name across the workspace, as the editor's language \
servers index them: `query` is a name or part of one (servers match it fuzzily). Returns \
`path:line: kind name` for each, at most {NAV_MAX_RESULTS}. Some language servers do not \
answer this; then use grep."""
