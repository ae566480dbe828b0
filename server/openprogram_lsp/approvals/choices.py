"""The options of an approval prompt, each naming exactly what it allows, and the rules each
"always" option creates."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Literal

from openprogram_lsp.approvals.rules import (
    EDIT_KINDS,
    CallFacts,
    EditScope,
    Rule,
    RuleScope,
    canonical_input,
)
from openprogram_lsp.core.types import PermissionOption

Grant = Literal["bypass"]
SCOPE_WORDS: dict[str, str] = {"session": "in this session",
                               "workspace": "in every session of this workspace"}
MAX_SHOWN = 60


@dataclass(frozen=True, slots=True)
class Origin:
    """The call a prompt is about: where new rules say they came from."""

    session_id: str
    turn_id: str
    tool_call_id: str


@dataclass(frozen=True, slots=True)
class Choice:
    """One option of a prompt: the wire option, the rules it makes, what else it grants."""

    option: PermissionOption
    rules: tuple[Rule, ...] = field(default_factory=tuple)
    grant: Grant | None = None


def _short(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= MAX_SHOWN else one[:MAX_SHOWN - 1] + "…"


def _rule(origin: Origin, facts: CallFacts, *, decision: Literal["allow", "deny"],
          kind: Literal["command", "edit", "call", "host", "tool"], value: str | None,
          scope: RuleScope,
          description: str, edit_scope: EditScope | None = None) -> Rule:
    return Rule(id="", decision=decision, kind=kind, tool=facts.tool, value=value,
                edit_scope=edit_scope, scope=scope,
                session_id=origin.session_id if scope == "session" else None,
                branch=facts.rules_branch if scope == "session" else None,
                origin="prompt", tool_call_id=origin.tool_call_id, turn_id=origin.turn_id,
                description=description)


def _opt(option_id: str, name: str,
         kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]
         ) -> PermissionOption:
    return PermissionOption(option_id=option_id, name=name, kind=kind)


ALLOW_ONCE = _opt("allow_once", "Allow once", "allow_once")
REJECT_ONCE = _opt("reject_once", "Reject", "reject_once")


def _command_choices(facts: CallFacts, origin: Origin, uncovered: list[str]) -> list[Choice]:
    parts = uncovered or list(facts.parts)
    if len(parts) == 1:
        what = f"`{_short(parts[0])}`"
    else:
        what = f"these {len(parts)} commands ({'; '.join(f'`{_short(p)}`' for p in parts)})"
    out = [Choice(ALLOW_ONCE)]
    for option_id, scope in (("allow_always", "session"), ("allow_always_workspace",
                                                          "workspace")):
        rules = tuple(_rule(origin, facts, decision="allow", kind="command", value=p,
                            scope=scope, description=f"Run `{p}`") for p in parts)  # type: ignore[arg-type]
        out.append(Choice(_opt(option_id, f"Always allow {what} {SCOPE_WORDS[scope]}",
                               "allow_always"), rules))
    whole = facts.command or ""
    out.append(Choice(REJECT_ONCE))
    out.append(Choice(_opt("reject_always", f"Always reject `{_short(whole)}`",
                           "reject_always"),
                      (_rule(origin, facts, decision="deny", kind="command", value=whole,
                             scope="workspace", description=f"Run `{whole}`"),)))
    return out


def _edit_choices(facts: CallFacts, origin: Origin) -> list[Choice]:
    out = [Choice(ALLOW_ONCE)]
    path = facts.path

    def edit(option_id: str, name: str, scope: RuleScope, edit_scope: EditScope,
             value: str | None, description: str, *, decision: Literal["allow", "deny"] =
             "allow") -> Choice:
        kind: Literal["allow_always", "reject_always"] = (
            "allow_always" if decision == "allow" else "reject_always")
        return Choice(_opt(option_id, name, kind),
                      (_rule(origin, facts, decision=decision, kind="edit", value=value,
                             scope=scope, edit_scope=edit_scope, description=description),))

    if path is not None:
        folder = posixpath.dirname(path) or "."
        out.append(edit("allow_always", f"Always allow edits to {path} {SCOPE_WORDS['session']}",
                        "session", "file", path, f"Edit {path}"))
        if folder != ".":
            out.append(edit("allow_always_folder",
                            f"Always allow edits in {folder}/ {SCOPE_WORDS['session']}",
                            "session", "folder", folder, f"Edit files in {folder}/"))
    out.append(edit("allow_always_all",
                    f"Always allow every edit in the workspace {SCOPE_WORDS['session']}",
                    "session", "workspace", None, "Edit any file of the workspace"))
    if path is not None:
        out.append(edit("allow_always_workspace",
                        f"Always allow edits to {path} {SCOPE_WORDS['workspace']}",
                        "workspace", "file", path, f"Edit {path}"))
    out.append(Choice(REJECT_ONCE))
    if path is not None:
        out.append(edit("reject_always", f"Always reject edits to {path}", "workspace", "file",
                        path, f"Edit {path}", decision="deny"))
    return out


def _call_choices(facts: CallFacts, origin: Origin, title: str) -> list[Choice]:
    value = canonical_input(facts.arguments)
    allow = _rule(origin, facts, decision="allow", kind="call", value=value, scope="session",
                  description=f"{title} (this exact call)")
    deny = _rule(origin, facts, decision="deny", kind="call", value=value, scope="workspace",
                 description=f"{title} (this exact call)")
    return [Choice(ALLOW_ONCE),
            Choice(_opt("allow_always", f"Always allow this exact {facts.tool} call "
                        f"{SCOPE_WORDS['session']}", "allow_always"), (allow,)),
            Choice(REJECT_ONCE),
            Choice(_opt("reject_always", f"Always reject this exact {facts.tool} call",
                        "reject_always"), (deny,))]


def _host_choices(facts: CallFacts, origin: Origin) -> list[Choice]:
    """A fetch: once, or every fetch of ``web_fetch`` from this host (session or workspace)."""
    host = facts.host
    out = [Choice(ALLOW_ONCE)]
    for option_id, scope in (("allow_always", "session"), ("allow_always_workspace",
                                                          "workspace")):
        rule = _rule(origin, facts, decision="allow", kind="host", value=host,
                     scope=scope, description=f"Fetch from {host}")  # type: ignore[arg-type]
        out.append(Choice(_opt(option_id, f"Always allow fetches from {host} "
                               f"{SCOPE_WORDS[scope]}", "allow_always"), (rule,)))
    out.append(Choice(REJECT_ONCE))
    out.append(Choice(_opt("reject_always", f"Always reject fetches from {host}",
                           "reject_always"),
                      (_rule(origin, facts, decision="deny", kind="host", value=host,
                             scope="workspace", description=f"Fetch from {host}"),)))
    return out


def _mcp_choices(facts: CallFacts, origin: Origin) -> list[Choice]:
    """Standing options naming the one tool of the one server (never "every edit")."""
    assert facts.mcp is not None
    server, tool = facts.mcp
    what = f"`{_short(tool)}` of MCP server `{_short(server)}`"
    description = f"Call {tool} of MCP server {server}"
    out = [Choice(ALLOW_ONCE)]
    scopes: tuple[tuple[str, RuleScope], ...] = (("allow_always", "session"),
                                                  ("allow_always_workspace", "workspace"))
    for option_id, scope in scopes:
        out.append(Choice(_opt(option_id, f"Always allow {what} {SCOPE_WORDS[scope]}",
                               "allow_always"),
                          (_rule(origin, facts, decision="allow", kind="tool", value=None,
                                 scope=scope, description=description),)))
    out.append(Choice(REJECT_ONCE))
    out.append(Choice(_opt("reject_always", f"Always reject {what}", "reject_always"),
                      (_rule(origin, facts, decision="deny", kind="tool", value=None,
                             scope="workspace", description=description),)))
    return out


def spawn_choices() -> list[Choice]:
    """A child agent: allow it under this turn's mode, or, only if chosen, without asking."""
    return [Choice(_opt("allow_once", "Allow (it asks before its own edits and commands)",
                        "allow_once")),
            Choice(_opt("allow_unattended", "Allow and let it run without asking",
                        "allow_once"), grant="bypass"),
            Choice(REJECT_ONCE)]


def choices_for(facts: CallFacts, origin: Origin, *, title: str, uncovered: list[str],
                spawns: bool = False, once_only: bool = False) -> list[Choice]:
    """The options of the prompt for one call (``once_only``: no standing rule is offered)."""
    if once_only:
        return [Choice(ALLOW_ONCE), Choice(REJECT_ONCE)]
    if spawns:
        return spawn_choices()
    if facts.mcp is not None:
        return _mcp_choices(facts, origin)
    if facts.kind == "execute" and facts.parts:
        return _command_choices(facts, origin, uncovered)
    if facts.kind in EDIT_KINDS:
        return _edit_choices(facts, origin)
    if facts.kind == "fetch" and facts.host is not None:
        return _host_choices(facts, origin)
    return _call_choices(facts, origin, title)
