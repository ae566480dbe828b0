"""Slash commands: the built-ins and custom prompt commands from Markdown files.

Custom commands come from ``.openprogram/commands/*.md`` and ``.claude/commands/*.md`` in the
workspace and ``$XDG_CONFIG_HOME/openprogram-lsp/commands/*.md`` for the user (a file in a
subdirectory is ``dir:name``). A file is a prompt template: optional front matter
(``description``, ``argument-hint``), then the body, where ``$ARGUMENTS`` is what follows the
command and ``$1`` to ``$9`` its words. Only text is substituted; nothing is run.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

BUILTINS: dict[str, tuple[str, str | None]] = {
    "compact": ("Summarise the conversation so far to free the context window", None),
    "fork": ("Ask again from before your last message, on a new branch", "[branch name]"),
    "undo": ("Undo the file changes of the last turn (again: the turn before)", None),
    "model": ("Show or set the model of the next turns", "[offline | openai:MODEL | ...]"),
    "mode": ("Show or set the permission mode", "[ask | accept-edits | plan | bypass]"),
    "new": ("Start a new session", None),
}
"""Built-in commands: ``/compact`` runs in the server, the others in the editor."""

WORKSPACE_DIRS = (".openprogram/commands", ".claude/commands")
MAX_BYTES = 64 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(:[A-Za-z0-9][A-Za-z0-9_.-]*)?$")


@dataclass(frozen=True, slots=True)
class Command:
    """One slash command."""

    name: str
    description: str
    source: str  # "builtin", "workspace" or "user"
    argument_hint: str | None = None
    path: str | None = None  # where a custom command's file is (shown)
    body: str = ""

    def listing(self) -> dict[str, object]:
        """The command as ``openprogram/commands`` lists it (snake_case keys)."""
        out: dict[str, object] = {"name": self.name, "description": self.description,
                                  "source": self.source,
                                  "kind": "builtin" if self.source == "builtin" else "custom"}
        if self.argument_hint:
            out["argument_hint"] = self.argument_hint
        if self.path:
            out["path"] = self.path
        return out


def user_dir() -> Path:
    """``$XDG_CONFIG_HOME/openprogram-lsp/commands``."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "openprogram-lsp" / "commands"


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text
    meta: dict[str, str] = {}
    for line in text[3:end].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip().lower()] = value.strip().strip("'\"")
    return meta, text[end + 4:].lstrip("\n")


def _scan(root: Path, shown: str, source: str) -> list[Command]:
    out: list[Command] = []
    try:
        base = root.resolve()
    except OSError:
        return out
    if not base.is_dir():
        return out
    for path in sorted(base.rglob("*.md")):
        rel = path.relative_to(base)
        if len(rel.parts) > 2:
            continue
        name = ":".join([*rel.parts[:-1], rel.stem])
        try:
            if not path.resolve().is_relative_to(base) or not path.is_file():
                continue
            with open(path, "rb") as fh:
                raw = fh.read(MAX_BYTES)
        except OSError:
            continue
        if not _NAME.match(name) or name in BUILTINS or name.startswith("mcp__"):
            continue
        meta, body = _front_matter(raw.decode("utf-8", "replace"))
        first = next((ln.strip("# ").strip() for ln in body.splitlines() if ln.strip()), "")
        out.append(Command(name=name, description=meta.get("description") or first[:120],
                           source=source, argument_hint=meta.get("argument-hint") or None,
                           path=f"{shown}/{rel.as_posix()}", body=body))
    return out


def load_commands(workspace: Path | None, user: Path | None = None) -> list[Command]:
    """Built-ins, then the workspace's commands, then the user's (the first of a name wins)."""
    found: dict[str, Command] = {n: Command(name=n, description=d, source="builtin",
                                            argument_hint=h) for n, (d, h) in BUILTINS.items()}
    sources: list[tuple[Path, str, str]] = []
    if workspace is not None:
        sources += [(workspace / d, d, "workspace") for d in WORKSPACE_DIRS]
    home = user if user is not None else user_dir()
    sources.append((home, str(home).replace(os.path.expanduser("~"), "~", 1), "user"))
    for root, shown, source in sources:
        for cmd in _scan(root, shown, source):
            found.setdefault(cmd.name, cmd)
    return list(found.values())


def parse(text: str) -> tuple[str, str] | None:
    """``/name rest`` as (name, rest); None when the text is not a command."""
    stripped = text.strip()
    if not stripped.startswith("/") or len(stripped) < 2:
        return None
    name = stripped[1:].split(" ", 1)[0]
    name = name.split("\n", 1)[0]
    if not _NAME.match(name):
        return None
    return name, stripped[1 + len(name):].strip()


def expand(command: Command, arguments: str) -> str:
    """The prompt a custom command sends: its body with the arguments put in."""
    body = command.body
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    used = "$ARGUMENTS" in body
    out = body.replace("$ARGUMENTS", arguments)

    def positional(m: re.Match[str]) -> str:
        i = int(m.group(1)) - 1
        return words[i] if i < len(words) else ""

    out, count = re.subn(r"\$([1-9])", positional, out)
    if arguments and not used and not count:
        out = f"{out.rstrip()}\n\nARGUMENTS: {arguments}"
    return out.strip()
