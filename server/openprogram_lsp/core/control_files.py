"""Control files: workspace files that make something run later, or widen the agent's power.

An edit of one of them always asks, in every permission mode but ``bypass``, and no standing
rule covers it (``agent.tool_exec``; the write helpers of ``tools.builtin.files`` check again,
so a tool that forgot to say which path it writes cannot slip one through). The sandbox binds
the ones at the workspace root read-only (``tools.sandbox``). ``.git`` is not here: file tools
refuse it outright (``tools.paths``) and the sandbox keeps it read-only.

Matching is on the workspace-relative path, case-insensitively (a case-insensitive filesystem
opens ``.VSCode/Settings.json`` as the same file). See docs/sandbox.md and
docs/decisions/control-files.md.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from openprogram_lsp.core.errors import ToolError

WHY = "this file can make commands run later"


@dataclass(frozen=True, slots=True)
class ControlFile:
    """One entry: ``dir`` matches a directory of that name anywhere and all below it,
    ``name`` a file of that name in any directory, ``suffix`` a file name ending so."""

    match: Literal["dir", "name", "suffix"]
    value: str
    reads: str  # what reads it (shown on the approval card)
    # at the workspace root inside the sandbox: None (writable), "existing" (bound read-only
    # when it exists) or "always" (a missing one cannot be created either)
    sandbox: Literal["existing", "always"] | None = None


CONTROL_FILES: tuple[ControlFile, ...] = (
    # the agent's own settings, hooks, agent definitions, commands and instructions
    ControlFile("dir", ".openprogram", "openprogram reads its settings, hooks, agents and "
                "commands from it", sandbox="always"),
    ControlFile("dir", ".claude", "Claude Code and openprogram read hooks, agents and "
                "commands from it", sandbox="always"),
    ControlFile("name", ".mcp.json", "it starts MCP servers", sandbox="always"),
    ControlFile("name", "agents.md", "agents read it as instructions"),
    ControlFile("name", "claude.md", "agents read it as instructions"),
    ControlFile("name", "claude.local.md", "agents read it as instructions"),
    # editors: settings, tasks, launch configurations, project-local init files
    ControlFile("dir", ".vscode", "VS Code reads settings, tasks and launch configurations "
                "from it", sandbox="always"),
    ControlFile("suffix", ".code-workspace", "VS Code reads settings and tasks from it"),
    ControlFile("dir", ".idea", "JetBrains IDEs read run configurations from it",
                sandbox="existing"),
    ControlFile("dir", ".zed", "Zed reads settings and tasks from it", sandbox="existing"),
    ControlFile("name", ".nvim.lua", "Neovim runs it (exrc)", sandbox="always"),
    ControlFile("name", ".nvimrc", "Neovim runs it (exrc)", sandbox="always"),
    ControlFile("name", ".exrc", "Vim and Neovim run it (exrc)", sandbox="always"),
    # shells and environment managers
    ControlFile("name", ".envrc", "direnv runs it on entering the directory", sandbox="always"),
    ControlFile("name", ".mise.toml", "mise runs its hooks and tasks"),
    ControlFile("name", "mise.toml", "mise runs its hooks and tasks"),
    *(ControlFile("name", rc, "a shell runs it at start")
      for rc in (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
                 ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc",
                 ".tcshrc", "config.fish")),
    # git: attributes pick filters and diff drivers, submodules are cloned and checked out;
    # hook managers run what they list at the next commit
    ControlFile("name", ".gitattributes", "git picks filters and diff drivers by it"),
    ControlFile("name", ".gitmodules", "git clones and checks out what it lists"),
    ControlFile("name", ".pre-commit-config.yaml", "pre-commit runs what it lists at a commit"),
    ControlFile("name", "lefthook.yml", "lefthook runs what it lists at a commit"),
    ControlFile("name", ".lefthook.yml", "lefthook runs what it lists at a commit"),
    ControlFile("dir", ".husky", "husky runs its hooks at a commit"),
    # package managers: scripts that run at install, settings that pick what runs
    ControlFile("name", "package.json", "npm runs its scripts (install hooks too)"),
    ControlFile("name", ".npmrc", "npm takes its script shell and node options from it"),
    ControlFile("name", ".yarnrc", "yarn takes what it runs from it"),
    ControlFile("name", ".yarnrc.yml", "yarn takes what it runs from it (yarnPath)"),
    ControlFile("name", ".pnpmfile.cjs", "pnpm runs it at install"),
    ControlFile("dir", ".cargo", "cargo takes runners and build settings from it"),
)

_DIRS = {c.value: c for c in CONTROL_FILES if c.match == "dir"}
_NAMES = {c.value: c for c in CONTROL_FILES if c.match == "name"}
_SUFFIXES = tuple(c for c in CONTROL_FILES if c.match == "suffix")


def control_entry(rel: str) -> ControlFile | None:
    """The entry a workspace-relative path (forward slashes) falls under, or None."""
    parts = [p for p in rel.lower().split("/") if p not in ("", ".")]
    if not parts:
        return None
    for part in parts[:-1]:
        found = _DIRS.get(part)
        if found is not None:
            return found
    name = parts[-1]
    found = _NAMES.get(name) or _DIRS.get(name)  # a directory itself (a move, a delete)
    if found is not None:
        return found
    return next((c for c in _SUFFIXES if name.endswith(c.value)), None)


def is_control_file(rel: str) -> bool:
    """Whether a workspace-relative path is a control file (or lies in a control directory)."""
    return control_entry(rel) is not None


def reason(rels: list[str]) -> str:
    """The approval card's words for a call that writes these control files."""
    said: list[str] = []
    for rel in rels:
        entry = control_entry(rel)
        if entry is not None and entry.reads not in said:
            said.append(entry.reads)
    return f"{WHY}: {'; '.join(said)}" if said else WHY


def sandbox_entries() -> tuple[ControlFile, ...]:
    """The control files the sandbox binds read-only at the workspace root."""
    return tuple(c for c in CONTROL_FILES if c.sandbox is not None)


_cleared: ContextVar[frozenset[str] | None] = ContextVar("op_control_cleared", default=None)
ANY = frozenset({"*"})


@contextmanager
def writes_cleared(rels: frozenset[str]) -> Iterator[None]:
    """Within the block (one approved tool call) the write helpers write only these control
    files (``ANY``: all of them, under ``bypass``); outside any block they do not check."""
    token = _cleared.set(rels if rels is ANY else frozenset(posixpath.normpath(r) for r in rels))
    try:
        yield
    finally:
        _cleared.reset(token)


def check_write(rel: str, shown: str) -> None:
    """Refuse a tool's write of a control file its approval did not name."""
    cleared = _cleared.get()
    if cleared is None or cleared is ANY or not is_control_file(rel):
        return
    if posixpath.normpath(rel) not in cleared:
        raise ToolError(f"{shown}: is a control file ({WHY}) and this call's approval did "
                        "not name it; write it with its own call so the user is asked")
