"""``[hooks]`` and ``[policies]``: user hooks in Claude Code's shape, built-in policy switches.

``[[hooks.PreToolUse]]`` tables hold ``matcher`` and ``[[hooks.PreToolUse.hooks]]`` entries
(``type``, ``command``, ``timeout``, ``critical``), exactly like ``hooks`` in Claude Code's
``settings.json``; ``hooks/config.py`` reads and checks each entry. Workspace hooks run only once
the user approved them, so a workspace file may set them; only the user's own file may switch a
policy off.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from openprogram_lsp.config.section import EnvVar, Section

HookGroups = list[dict[str, Any]]


class HooksSection(Section):
    """Hook groups by event."""

    name: ClassVar[str] = "hooks"

    PreToolUse: HookGroups = Field(default_factory=list)
    PermissionRequest: HookGroups = Field(default_factory=list)
    PostToolUse: HookGroups = Field(default_factory=list)
    PostToolUseFailure: HookGroups = Field(default_factory=list)
    UserPromptSubmit: HookGroups = Field(default_factory=list)
    Stop: HookGroups = Field(default_factory=list)
    StopFailure: HookGroups = Field(default_factory=list)
    SubagentStart: HookGroups = Field(default_factory=list)
    SubagentStop: HookGroups = Field(default_factory=list)
    SessionStart: HookGroups = Field(default_factory=list)
    SessionEnd: HookGroups = Field(default_factory=list)
    PreCompact: HookGroups = Field(default_factory=list)
    PostCompact: HookGroups = Field(default_factory=list)
    Notification: HookGroups = Field(default_factory=list)


class PoliciesSection(Section):
    """The built-in policies: refuse destructive commands, note edits without a test run."""

    name: ClassVar[str] = "policies"
    env: ClassVar[dict[str, EnvVar]] = {
        "destructive_commands": EnvVar("OPENPROGRAM_POLICY_DESTRUCTIVE_COMMANDS",
                                       "refuse rm -rf /, forced pushes to protected branches, "
                                       "curl | sh (true/false)"),
        "untested_edits": EnvVar("OPENPROGRAM_POLICY_UNTESTED_EDITS",
                                 "note turns that changed code and ran no test (true/false)"),
    }
    user_only: ClassVar[frozenset[str]] = frozenset({"destructive_commands", "untested_edits"})

    destructive_commands: bool = True
    untested_edits: bool = True
