"""Subagents: child branches of the same conversation, run in the background, reporting back.

``run_agent_turn`` is one more dispatcher call (source ``agent_spawn``, ``advance_head=False``)
under the parent turn's permission mode and rules, its approvals going to the same editor
labelled with the child's label; ``bypass`` only when the user chose "let it run without
asking" on the spawn prompt (registered tool gates apply even then). ``spawn`` runs it as a
job on the task runner and, when the child ends, writes an attach pointer in the parent's
session and follows up the parent: inside its turn if that is still running, else as a new
``follow_up`` turn on the parent's branch. ``enqueue_message`` does the same for send_message.
"""

from __future__ import annotations

import asyncio
import logging

from openprogram_lsp.agents.definitions import AgentDef
from openprogram_lsp.collab import agent_tool, jobs, list_agents, replies
from openprogram_lsp.collab.hub import Hub
from openprogram_lsp.collab.lanes import Lane
from openprogram_lsp.collab.send_message import send_message
from openprogram_lsp.collab.task_runner import Job
from openprogram_lsp.collab.types import AgentTurnResult, Origin
from openprogram_lsp.core.ports import AgentDefinitionRow, AgentRun, CallSite
from openprogram_lsp.dispatcher.active import ActiveTurn

log = logging.getLogger(__name__)

__all__ = ["AgentTurnResult", "Origin", "Subagents"]


class Subagents(Hub):
    """Child runs, message deliveries and replies of one dispatcher (its ``Collaboration``)."""

    def spawn(self, sid: str, prompt: str, *, label: str | None = None,
              branch_from: str | None = None, parent: Origin | None = None,
              model: str | None = None, depth: int = 0,
              definition: AgentDef | None = None) -> Job:
        """Run a child in the background; its outcome is delivered back to ``parent``."""
        return jobs.spawn(self, sid, prompt, label=label, branch_from=branch_from,
                          parent=parent, model=model, depth=depth, definition=definition)

    def enqueue_message(self, origin: Origin, lane: Lane, text: str, *, delivery_id: str,
                        agent_id: str | None, depth: int) -> Job:
        """Deliver a message to a lane: wait for the branch, run one turn, reply to origin."""
        return jobs.enqueue_message(self, origin, lane, text, delivery_id=delivery_id,
                                    agent_id=agent_id, depth=depth)

    # -- turn lifecycle hooks (called by the dispatcher) -------------------------------------

    def after_turn(self, turn: ActiveTurn, status: str, leftover: list[str]) -> None:
        """A turn ended: cancel its children if it was cancelled, re-queue unread follow-ups."""
        with self._lock:
            depth = max(turn.request.message_depth, self._depth.pop(turn.turn_id, 0))
        try:
            if status in ("cancelled", "interrupted"):
                self.runner.cancel_where(lambda j: j.parent_turn_id == turn.turn_id,
                                         cascaded=True)
            elif leftover:
                origin = self.origin_of_turn(turn, running=False)
                for text in leftover:
                    replies.queue_follow_up(self, origin, text, depth)
        except Exception:
            log.exception("after-turn handling of %s failed", turn.turn_id)
        self.kick()

    def send_message(self, message: str, to: str, agent_id: str = "", *,
                     session_id: str | None = None) -> str:
        """send_message outside a tool call (the sender: the running turn, else the head)."""
        return send_message(self, message, to, agent_id, session_id=session_id)

    def cancel_session(self, sid: str) -> int:
        """Cancel the jobs started from a session (cascade) and those running in it."""
        n = self.runner.cancel_where(lambda j: j.origin_session_id == sid, cascaded=True)
        return n + self.runner.cancel_where(lambda j: j.session_id == sid)

    def cancel_all(self) -> int:
        """Cancel every job (shutdown)."""
        return self.runner.cancel_where(lambda j: True, cascaded=True)

    def cancel_agent(self, agent_id: str) -> bool:
        """Cancel one child or delivery by id; its origin is told."""
        return self.runner.cancel(agent_id)

    def list_agents(self, session_id: str | None = None) -> list[AgentRun]:
        """Children and deliveries of a session (of every session when None)."""
        return list_agents.list_agents(self, session_id)

    def close(self, timeout: float = 10.0) -> None:
        """Cancel every job and stop the runner."""
        self.runner.shutdown(timeout)

    def attach_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run background jobs on this (the server's) event loop."""
        self.runner.attach_loop(loop)

    async def drain(self, timeout: float = 30.0) -> bool:
        """Wait until no job runs; False on timeout."""
        return await self.runner.drain(timeout)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until no job runs; False on timeout."""
        return self.runner.wait_idle(timeout)

    def busy(self) -> bool:
        """Whether a job is still running."""
        return any(not job.done for job in self.runner.jobs())

    # -- the collaboration tools' port (core.ports.Collab) ---------------------------------

    def spawn_from_tool(self, site: CallSite, prompt: str, label: str | None,
                        branch_from: str | None, agent: str | None = None, *,
                        unattended: bool = False) -> str:
        """The ``agent`` tool."""
        return agent_tool.spawn_from_tool(self, site, prompt, label, branch_from, agent,
                                          unattended=unattended)

    def send_from_tool(self, site: CallSite, message: str, to: str) -> str:
        """The ``send_message`` tool."""
        return send_message(self, message, to, session_id=site.session_id, via_tool=True)

    def agents_for_tool(self, site: CallSite) -> list[AgentRun]:
        """The ``list_agents`` tool."""
        return self.list_agents(site.session_id)

    def definitions_for_tool(self, site: CallSite) -> list[AgentDefinitionRow]:
        """The ``list_agents`` tool: agent definitions of the caller's workspace."""
        return agent_tool.definitions(self, site.workspace)
