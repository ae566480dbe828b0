"""A turn's tool calls on record as they run (step 6), so a crash loses none of them.

When a call starts, the reply so far is written with the call listed as running; when it
ends, its end is written once, as its own tool node (``<turn id>_t_<call id>``). The reply is
written again at the next call or at the turn's end; until then readers and recovery take a
call's end from its tool node (``store.reply_calls``).
"""

from __future__ import annotations

import contextlib

from openprogram_lsp.agent.loop import LoopState
from openprogram_lsp.core.types import Node, ToolCall, ToolCallRecord
from openprogram_lsp.store.reply_calls import ended_call
from openprogram_lsp.store.session_handle import SessionHandle
from openprogram_lsp.tools.registry import ToolRegistry


def tool_node_id(turn_id: str, call_id: str) -> str:
    """The id of a call's tool node (the call id made safe for a file name)."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)
    return f"{turn_id}_t_{safe}"[:120]


class ToolRecords:
    """Writes one turn's tool calls into its session: ``started`` and ``finished`` are the
    loop's ``on_tool_started`` and ``on_tool_finished``."""

    def __init__(self, session: SessionHandle, turn_id: str, tools: ToolRegistry,
                 state: LoopState) -> None:
        self.session = session
        self.turn_id = turn_id
        self.tools = tools
        self.state = state

    def started(self, call: ToolCall, step: int) -> None:
        """The reply so far and the call now running."""
        state, session = self.state, self.session
        running = ToolCallRecord(id=call.id, name=call.name, input=call.arguments,
                                 status="in_progress", step=step)
        tool = self.tools.get(call.name)
        if tool is not None:
            running.kind = tool.kind
            with contextlib.suppress(Exception):  # a title from bad arguments is no title
                running.title = tool.title(tool.parse(call.arguments))
        session.update_node(self.turn_id, text=state.text,
                            tool_calls=[*state.tool_calls, running],
                            metadata={**session.node(self.turn_id).metadata,
                                      "steps": list(state.steps),
                                      "interjections": list(state.interjections),
                                      **({"thoughts": state.stored_thoughts()}
                                         if state.thoughts else {})})

    def finished(self, record: ToolCallRecord) -> None:
        """The call's end, as its tool node."""
        self.session.append(Node(
            id=tool_node_id(self.turn_id, record.id), role="tool", text=record.output or "",
            caller=self.turn_id, status="done" if record.status == "completed" else "error",
            metadata={"toolCallId": record.id, "name": record.name, "kind": record.kind,
                      "input": record.input, "step": record.step, **ended_call(record),
                      **({"attachments": record.attachments} if record.attachments else {}),
                      **({"images": [i.wire() for i in record.images]} if record.images
                         else {})}))
