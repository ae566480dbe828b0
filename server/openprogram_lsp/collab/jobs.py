"""Starting background work: a child run, a message delivery; each reports back when it ends."""

from __future__ import annotations

from openprogram_lsp.agents.definitions import AgentDef
from openprogram_lsp.collab import replies
from openprogram_lsp.collab.hub import Hub
from openprogram_lsp.collab.lanes import Lane
from openprogram_lsp.collab.task_runner import Job
from openprogram_lsp.collab.types import AgentTurnResult, Origin, branch_model, entered
from openprogram_lsp.core.ids import new_id


def spawn(hub: Hub, sid: str, prompt: str, *, label: str | None = None,
          branch_from: str | None = None, parent: Origin | None = None,
          model: str | None = None, depth: int = 0,
          definition: AgentDef | None = None, unattended: bool = False) -> Job:
    """Run a child in the background; its outcome is delivered back to ``parent``
    (``unattended``: the user let it run without asking)."""
    agent_id = new_id("ag")
    lane = hub.lanes.get(sid, ("name", label) if label else ("agent", agent_id))
    lane.waiting += 1

    async def body(job: Job) -> AgentTurnResult | None:
        res: AgentTurnResult | None = None
        try:
            async with entered(lane):
                res = await hub.run_agent_turn(
                    sid, prompt, agent_id, branch_from, label, model=model,
                    message_depth=depth, parent=parent, job=job,
                    metadata={"agentType": definition.name} if definition else None,
                    permission_mode=definition.permission_mode if definition else None,
                    unattended=unattended)
                lane.tip, lane.follow = res.head_id, True
        except Exception as exc:  # the runner records it too, but only after the report
            job.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            if parent is not None and not job.cascaded:
                replies.report_agent(hub, parent, job, res, depth + 1)
        return res

    return hub.runner.submit(body, kind="agent", session_id=sid, job_id=agent_id,
                              origin_session_id=parent.session_id if parent else None,
                              parent_turn_id=parent.turn_id if parent else None,
                              label=label)

def enqueue_message(hub: Hub, origin: Origin, lane: Lane, text: str, *, delivery_id: str,
                    agent_id: str | None, depth: int) -> Job:
    """Deliver a message to a lane: wait for the branch, run one turn, reply to origin."""
    sid = lane.session_id
    lane.waiting += 1

    async def body(job: Job) -> AgentTurnResult | None:
        res: AgentTurnResult | None = None
        problem = ""
        try:
            async with entered(lane):
                tip = await hub.wait_free(lane)
                if tip is None:
                    problem = f"branch {lane.display} has no messages to continue"
                    return None
                store = hub.dispatcher.services.store
                owner = store.get_node(sid, tip).metadata.get("agentId")
                runner_id = agent_id or (owner if isinstance(owner, str) else None)
                res = await hub.run_agent_turn(
                    sid, text, runner_id, tip, None, model=branch_model(
                        hub.dispatcher, sid, tip), message_depth=depth, parent=origin,
                    job=job, source="send_message", advance_head=store.head(sid) == tip,
                    kind="message", metadata={"deliveryId": delivery_id})
                lane.tip, lane.follow = res.head_id, True
        except Exception as exc:  # the runner records it too, but only after the report
            job.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            if not job.cascaded:
                replies.report_message(hub, origin, lane, job, res, depth + 1, problem)
        return res

    return hub.runner.submit(body, kind="message", session_id=sid, job_id=delivery_id,
                              origin_session_id=origin.session_id,
                              parent_turn_id=origin.turn_id, label=lane.display)
