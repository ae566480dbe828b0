"""The ``agent`` tool's checks: budget, label, fork point; then a child reporting to the turn."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from openprogram_lsp.agents.definitions import AgentDef
from openprogram_lsp.collab import jobs
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.ports import AgentDefinitionRow, CallSite

if TYPE_CHECKING:
    from openprogram_lsp.collab.hub import Hub
    from openprogram_lsp.dispatcher.active import ActiveTurn

LABEL_MAX = 64
FRESH = ("root", "none", "null", "")


def tool_turn(sub: Hub, site: CallSite) -> ActiveTurn:
    """The running turn a tool call belongs to."""
    turn = next((t for t in sub.dispatcher.active_turns(site.session_id)
                 if t.turn_id == site.turn_id), None)
    if turn is None:
        raise ToolError("this tool can only run inside a turn")
    return turn


def check_label(sub: Hub, sid: str, label: str) -> None:
    """A label must be short, usable as ``to``, and not name an existing branch or child."""
    if not label or len(label) > LABEL_MAX or ":" in label or label.lower() == "new":
        raise ToolError(f"label must be 1-{LABEL_MAX} characters, without ':' and not 'new'")
    taken = sub.dispatcher.services.store.find_branch(sid, label) is not None or any(
        j.label == label and j.session_id == sid and j.kind == "agent"
        for j in sub.runner.jobs())
    if taken:
        raise ToolError(f"label {label!r} is already a branch of this session; pick another "
                        f"label, or talk to it with send_message(to={label!r})")


def fork_point(sub: Hub, turn: ActiveTurn, branch_from: str | None) -> str | None:
    """None for a fresh branch; ``current`` is the turn's own prompt; else a message id."""
    if branch_from is None or branch_from.strip().lower() in FRESH:
        return None
    store, sid = sub.dispatcher.services.store, turn.session_id
    ref = branch_from.strip()
    node_id = turn.user_node_id if ref.lower() == "current" else ref
    node = store.get_node(sid, node_id) if store.has_node(sid, node_id) else None
    if node is None or node.caller is not None or node.role not in ("user", "assistant",
                                                                    "system"):
        raise ToolError(f"branch_from: {branch_from!r} is not a message of this session; omit "
                        "it for a fresh branch or use \"current\"")
    return node_id


def definitions(sub: Hub, workspace: Path) -> list[AgentDefinitionRow]:
    """The agent definitions of a workspace, with their trust state."""
    engine = sub.dispatcher.services.hooks
    return engine.agent_listing(workspace) if engine is not None else []


def definition_for(sub: Hub, turn: ActiveTurn, name: str) -> AgentDef:
    """The named agent definition, if it exists and the user trusts it."""
    engine = sub.dispatcher.services.hooks
    found = engine.agents(turn.workspace) if engine is not None else {}
    agent = found.get(name)
    if agent is None:
        names = ", ".join(sorted(found)) or "none are defined"
        raise ToolError(f"agent: no agent definition named {name!r} ({names})")
    assert engine is not None
    state = engine.definition_trust(turn.workspace, agent)
    if state != "trusted" and agent.id not in turn.trusted_once:
        raise ToolError(f"agent: the definition {name!r} ({agent.source}) is "
                        f"{'rejected' if state == 'rejected' else 'not approved yet'} by the "
                        "user; work without it")
    return agent


def spawn_from_tool(sub: Hub, site: CallSite, prompt: str, label: str | None,
                    branch_from: str | None, agent: str | None = None, *,
                    unattended: bool = False) -> str:
    """Validate an ``agent`` call and spawn the child; returns the receipt for the model."""
    turn = tool_turn(sub, site)
    definition = definition_for(sub, turn, agent) if agent else None
    depth = sub.depth_of(turn) + 1
    limit = sub.max_messages(turn.session_id)
    if depth > limit:
        raise ToolError(f"agent budget exhausted: a child here would be message {depth} of a "
                        f"chain limited to {limit} (agent.max_messages); finish the "
                        "work yourself instead")
    if label is not None:
        check_label(sub, turn.session_id, label)
    fork = fork_point(sub, turn, branch_from)
    model = sub.child_model(turn)
    if definition is not None and definition.model and definition.model != "inherit" and (
            ":" in definition.model or definition.model == "offline"):
        model = definition.model  # Claude Code aliases (sonnet, opus) mean the parent's model
    job = jobs.spawn(sub, turn.session_id, prompt, label=label, branch_from=fork,
                     parent=sub.origin_of_turn(turn), model=model, depth=depth,
                     definition=definition, unattended=unattended)
    where = f"branch {label!r}" if label else "a new branch"
    return (f"[spawned agent {job.id} on {where}, running async] Its result will come back to "
            f"you as a follow-up message; do not poll. Message it with send_message(to="
            f"{(label or job.id)!r}).")
