"""A PermissionRequest hook's ``updatedPermissions``: Claude Code's rule updates as our rules.

Only ``addRules`` is applied: ``{"type": "addRules", "rules": [{"toolName": "Bash",
"ruleContent": "npm test:*"}], "behavior": "allow" | "deny", "destination": "session" |
"localSettings" | "projectSettings" | "userSettings"}``. A ``session`` destination is a rule of
this session (and branch scope); the others are rules of the workspace in our rule book
(Claude Code's own settings files are never written). Each becomes a settings-style pattern
rule: a command pattern covers each part of a compound command alone (``npm test:*`` is
``npm test`` and ``npm test *``), a path pattern is workspace-relative (a rule for paths
outside the workspace is dropped), ``domain:HOST`` covers that host's URLs. ``ask`` rules,
``setMode``, ``addDirectories`` and the rest are not applied (logged).
"""

from __future__ import annotations

import logging
from typing import Any

from openprogram_lsp.approvals.rules import Rule
from openprogram_lsp.tools.claude_tools import TOOLS

log = logging.getLogger(__name__)

_BY_CLAUDE = {m.claude: ours for ours, m in TOOLS.items()}
_PATHS = frozenset({"read_file", "write_file", "edit_file", "multi_edit", "list_dir",
                    "find_files", "grep"})


def _values(tool: str, content: str | None) -> list[str | None] | None:
    """The pattern values a rule's content stands for (None: not applicable)."""
    if content is None or content.strip() in ("", "*"):
        return [None]
    content = content.strip()
    if tool == "run_command":
        if content.endswith(":*"):
            prefix = content[:-2].rstrip()
            return [prefix, f"{prefix} *"]
        return [content]
    if tool in _PATHS:
        if content.startswith(("//", "~")):
            return None  # outside the workspace: our tools never go there
        # (an allow may cover less than Claude Code's, never more: ``**/`` needs a folder)
        content = content.removeprefix("./").lstrip("/").replace("**/", "*/")
        content = content.replace("**", "*")
        return [content]
    if tool == "web_fetch" and content.startswith("domain:"):
        host = content[len("domain:"):]
        return [f"https://{host}/*", f"http://{host}/*", f"https://*.{host}/*"]
    return [content]


def rules_of(updates: Any, *, session_id: str, branch: str | None, tool_call_id: str,
             turn_id: str) -> list[Rule]:
    """Our rules for the ``addRules`` entries of ``updatedPermissions`` (others skipped)."""
    out: list[Rule] = []
    if not isinstance(updates, list):
        return out
    for update in updates:
        if not isinstance(update, dict) or update.get("type") != "addRules":
            log.info("a PermissionRequest hook's permission update %r is not applied here",
                     update.get("type") if isinstance(update, dict) else update)
            continue
        behavior = update.get("behavior")
        if behavior not in ("allow", "deny"):
            continue
        session = update.get("destination") == "session"
        for raw in update.get("rules") or []:
            if not isinstance(raw, dict) or not isinstance(raw.get("toolName"), str):
                continue
            name = raw["toolName"]
            tool = _BY_CLAUDE.get(name) or name
            content = raw.get("ruleContent")
            values = _values(tool, content if isinstance(content, str) else None)
            for value in values or []:
                shown = f"{name}({content})" if isinstance(content, str) and content else name
                out.append(Rule(id="", decision=behavior, kind="pattern", tool=tool,
                                value=value, scope="session" if session else "workspace",
                                session_id=session_id if session else None,
                                branch=branch if session else None, origin="prompt",
                                tool_call_id=tool_call_id, turn_id=turn_id,
                                description=f"{behavior} {shown} (a PermissionRequest hook)"))
    return out
