"""Slash commands advertised through ``available_commands_update``: the DAG and checkpoints.

ACP hosts draw no branch or checkpoint UI for external agents, so these reach them from the
prompt box. Each answers as agent text and is not recorded in the session, except ``/compact``
and ``/fork``, which run turns.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from openprogram_lsp.context.commands import Command
from openprogram_lsp.core.errors import CheckpointError, InvalidParams, SessionBusy
from openprogram_lsp.core.types import PERMISSION_MODES, PermissionMode
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.tools.mcp import full_name
from openprogram_lsp.tools.mcp.catalog import PromptInfo

COMMANDS: dict[str, tuple[str, str | None]] = {
    "branches": ("List the conversation's branches", None),
    "checkout": ("Switch to a branch (by name or head id)", "branch name or head id"),
    "fork": ("Ask again from before your last message, on a new branch", "the new message"),
    "checkpoints": ("List this session's file checkpoints", None),
    "diff": ("Show a checkpoint's diff", "checkpoint id [path]"),
    "restore": ("Restore files from a checkpoint (undoable)", "checkpoint id [paths...]"),
    "compact": ("Summarise the conversation to free context", None),
    "mode": ("Set the permission mode", "ask | accept-edits | plan | bypass"),
    "model": ("Show or switch the model (from the next prompt)", "model or its number"),
    "effort": ("Show or set the model's reasoning effort (from the next prompt)",
               "default | low | medium | high"),
}


def available(mcp_prompts: Sequence[tuple[str, PromptInfo]] = (),
              custom: Sequence[Command] = ()) -> list[AvailableCommand]:
    """The commands as ACP advertises them, then the workspace's and the user's own commands
    (``.openprogram/commands``), then the running MCP servers' prompts."""
    ours = [AvailableCommand(name=name, description=desc,
                             input=AvailableCommandInput(UnstructuredCommandInput(hint=hint))
                             if hint else None)
            for name, (desc, hint) in COMMANDS.items()]
    for command in custom:
        if command.source == "builtin" or command.name in COMMANDS:
            continue
        ours.append(AvailableCommand(
            name=command.name, description=command.description or f"/{command.name}",
            input=AvailableCommandInput(UnstructuredCommandInput(hint=command.argument_hint))
            if command.argument_hint else None))
    for server, prompt in mcp_prompts:
        hint = " ".join(f"{a.name}=..." for a in prompt.arguments)
        ours.append(AvailableCommand(
            name=full_name(server, prompt.name),
            description=prompt.description or f"MCP prompt {prompt.name} of {server}",
            input=AvailableCommandInput(UnstructuredCommandInput(hint=hint)) if hint else None))
    return ours


@dataclass(slots=True)
class Parsed:
    """A slash command in a prompt."""

    name: str
    args: list[str]
    rest: str


def parse(text: str) -> Parsed | None:
    """The command a prompt starts with, if it is one of ours."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    if head not in COMMANDS:
        return None
    try:
        args = shlex.split(rest)
    except ValueError as exc:
        raise InvalidParams(f"/{head}: {exc}") from None
    return Parsed(head, args, rest.strip())


def _short(cid: str) -> str:
    return cid[:12]


class Commands:
    """Runs the answering commands against the dispatcher's stores."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher

    def _checkpointer(self, workspace: Path) -> Any:
        cp = self.dispatcher.checkpointer(workspace)
        if cp is None:
            raise CheckpointError("checkpoints are not available for this workspace")
        return cp

    def branches(self, sid: str) -> str:
        rows = self.dispatcher.services.store.list_branches(sid)
        if not rows:
            return "No branches yet."
        lines = [f"{'*' if r.active else ' '} {r.name or r.head_id}  "
                 f"({r.length} messages) {r.preview}" for r in rows]
        return "Branches (* is active):\n```\n" + "\n".join(lines) + "\n```"

    def checkout(self, sid: str, target: str) -> str:
        store = self.dispatcher.services.store
        head = store.find_branch(sid, target) or (target if store.has_node(sid, target) else None)
        if head is None:
            raise InvalidParams(f"/checkout: no branch or node {target!r}")
        if self.dispatcher.user_turn(sid) is not None:
            raise SessionBusy(f"session {sid} is running a turn; cancel it before /checkout")
        store.set_head(sid, head)
        return f"Switched to {target}. Load the session again to see that branch's history."

    def fork_point(self, sid: str) -> str | None:
        """The node before the active branch's last user message (None: a new root)."""
        store = self.dispatcher.services.store
        head = store.head(sid)
        chain = store.get_branch(sid, head) if head else []
        last_user = next((n for n in reversed(chain) if n.role == "user"), None)
        if last_user is None:
            raise InvalidParams("/fork: nothing to fork from yet")
        return last_user.predecessor

    async def checkpoints(self, sid: str, workspace: Path) -> str:
        items = await asyncio.to_thread(self._checkpointer(workspace).list, session_id=sid)
        if not items:
            return "No checkpoints for this session yet."
        lines = [f"{_short(c.id)}  {c.kind:<8} {c.created_at[:19]}  {c.message}  "
                 f"[{', '.join(f.path for f in c.files[:5])}"
                 f"{' …' if len(c.files) > 5 else ''}]" for c in items[:50]]
        return "Checkpoints, newest first:\n```\n" + "\n".join(lines) + "\n```"

    async def diff(self, workspace: Path, args: list[str]) -> str:
        if not args:
            raise InvalidParams("/diff: give a checkpoint id")
        out = await asyncio.to_thread(self._checkpointer(workspace).diff, args[0],
                                      args[1] if len(args) > 1 else None)
        text = out.diff
        return f"```diff\n{text}\n```" if text else "No changes in that checkpoint."

    async def restore(self, sid: str, workspace: Path, args: list[str]) -> str:
        if not args:
            raise InvalidParams("/restore: give a checkpoint id")
        busy = [t for t in self.dispatcher.active_turns()
                if t.workspace.resolve() == workspace.resolve()]
        if busy:
            raise SessionBusy("a turn is running in this workspace; cancel it before /restore")
        out = await asyncio.to_thread(self._checkpointer(workspace).restore, args[0],
                                      args[1:] or None, session_id=sid)
        restored, safety = out.restored, out.safety_checkpoint_id
        undo = f" Undo with `/restore {safety}`." if safety else ""
        left = "".join(f"\nNot restored: `{n.path}`: {n.reason}" for n in out.not_restored or ())
        return f"Restored {len(restored)} file(s).{undo}{left}"

    @staticmethod
    def mode(value: str) -> PermissionMode:
        if value not in PERMISSION_MODES:
            raise InvalidParams(f"/mode: use one of {', '.join(PERMISSION_MODES)}")
        return value  # type: ignore[return-value]
