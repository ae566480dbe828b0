"""Running a prompt that is one of our slash commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.schema import PromptResponse, TextContentBlock

from acp import helpers
from openprogram_lsp.acp import commands as cmds
from openprogram_lsp.acp.content import Block
from openprogram_lsp.acp.session import AcpSession
from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.core.types import TurnRequest

if TYPE_CHECKING:
    from openprogram_lsp.acp.view import AgentView


async def run_slash(agent: AgentView, sess: AcpSession,
                    blocks: list[Block]) -> PromptResponse | TurnRequest | None:
    """Answer a slash command (a response), turn it into a turn request, or None (not one)."""
    if not blocks or not all(isinstance(b, TextContentBlock) for b in blocks):
        return None
    text = "".join(b.text for b in blocks if isinstance(b, TextContentBlock))
    try:
        parsed = cmds.parse(text)
        if parsed is None:
            return None
        if not sess.stored and parsed.name not in ("mode", "model", "effort"):
            raise OpenProgramError(f"/{parsed.name}: nothing yet (this session has no message)")
        if parsed.name == "compact":
            return TurnRequest(text="/compact", session_id=sess.store_id,
                               workspace=str(sess.workspace), metadata={"client": "acp"})
        if parsed.name == "fork":
            if not parsed.rest:
                raise OpenProgramError("/fork: give the new message")
            return TurnRequest(text=parsed.rest, session_id=sess.store_id,
                               branch_from=agent.commands.fork_point(sess.store_id),
                               workspace=str(sess.workspace), metadata={"client": "acp"})
        reply = await _answer(agent, sess, parsed)
    except OpenProgramError as exc:
        reply = f"/{text.strip()[1:].split(' ', 1)[0]}: {exc.message}" \
            if not exc.message.startswith("/") else exc.message
    agent.notify(sess.session_id, helpers.update_agent_message_text(reply))
    return PromptResponse(stop_reason="end_turn")


async def _answer(agent: AgentView, sess: AcpSession, parsed: cmds.Parsed) -> str:
    c = agent.commands
    sid, ws = sess.store_id, sess.workspace
    if parsed.name == "branches":
        return c.branches(sid)
    if parsed.name == "checkout":
        if not parsed.args:
            raise OpenProgramError("/checkout: give a branch name or head id")
        return c.checkout(sid, parsed.args[0])
    if parsed.name == "checkpoints":
        return await c.checkpoints(sid, ws)
    if parsed.name == "diff":
        return await c.diff(ws, parsed.args)
    if parsed.name == "restore":
        return await c.restore(sid, ws, parsed.args)
    if parsed.name == "model":
        return _model(agent, sess, parsed.args)
    if parsed.name == "effort":
        return _effort(agent, sess, parsed.args)
    assert parsed.name == "mode"
    if not parsed.args:
        return f"The permission mode is {sess.mode}."
    agent.set_setting(sess, "mode", c.mode(parsed.args[0]))
    return f"Permission mode set to {sess.mode}."


def _model(agent: AgentView, sess: AcpSession, args: list[str]) -> str:
    """``/model``: the configured models, numbered (``*`` the current one); ``/model X`` picks
    one by name or number, as the model option does (for clients without a model menu)."""
    from openprogram_lsp.acp import settings as conf

    choices = conf.model_choices(agent.dispatcher, sess)
    current = conf.current_model(agent.dispatcher, sess)
    if not args:
        lines = [f"{'*' if m == current else ' '} {i}. {m}" for i, m in enumerate(choices, 1)]
        return "Models (* is this session's):\n```\n" + "\n".join(lines) + "\n```"
    pick = args[0]
    if pick.isdigit() and 1 <= int(pick) <= len(choices):
        pick = choices[int(pick) - 1]
    if pick not in choices:
        raise OpenProgramError(f"/model: {pick[:100]!r} is not one of {', '.join(choices)}")
    agent.set_setting(sess, "model", pick)
    return f"Model set to {pick} (from the next prompt)."


def _effort(agent: AgentView, sess: AcpSession, args: list[str]) -> str:
    """``/effort``: the reasoning effort of the session's model; ``/effort X`` sets it, as the
    effort option does (for clients that draw no ``thought_level`` menu: avante,
    agent-shell)."""
    from openprogram_lsp.acp import settings as conf

    model = conf.current_model(agent.dispatcher, sess)
    if not conf.thinks(agent.dispatcher, sess):
        raise OpenProgramError(f"/effort: {model} takes no reasoning effort")
    if not args:
        return (f"The reasoning effort of {model} is {sess.effort or 'default'} "
                f"(one of {', '.join(conf.EFFORTS)}).")
    if args[0] not in conf.EFFORTS:
        raise OpenProgramError(f"/effort: use one of {', '.join(conf.EFFORTS)}")
    agent.set_setting(sess, conf.EFFORT, args[0])
    return f"Reasoning effort set to {sess.effort or 'default'} (from the next prompt)."
