"""The connection to a client: the SDK's agent side with the unstable session methods on, plus
the two methods SDK 0.12 does not route: ``session/delete`` (in its schema, not its router) and
``session/set_model`` (the older model switch agent-shell still sends; ``legacy``)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, cast

from acp.agent.connection import AgentSideConnection
from acp.meta import AGENT_METHODS
from acp.router import MessageRouter
from acp.schema import DeleteSessionRequest
from acp.utils import normalize_result
from pydantic import ConfigDict, Field

from acp import Agent
from openprogram_lsp.acp.transport import CheckedTransport
from openprogram_lsp.core.model import Model

SET_MODEL = "session/set_model"


class SetSessionModelRequest(Model):
    """``session/set_model`` params (ACP's unstable schema)."""

    model_config = ConfigDict(populate_by_name=True)

    session_id: Annotated[str, Field(alias="sessionId")]
    model_id: Annotated[str, Field(alias="modelId")]
    field_meta: Annotated[dict[str, Any] | None, Field(alias="_meta")] = None


def connect(agent: Any, reader: asyncio.StreamReader,
            writer: asyncio.StreamWriter) -> AgentSideConnection:
    """The agent side of one client connection over the checked transport (``transport``),
    every session method routed (call ``listen()`` to serve)."""
    conn = AgentSideConnection(cast(Agent, agent), CheckedTransport(reader, writer),
                               listening=False, use_unstable_protocol=True)
    router = getattr(getattr(conn, "_conn", None), "_handler", None)
    if not isinstance(router, MessageRouter):  # an SDK change: fail loudly, not silently
        raise RuntimeError("agent-client-protocol changed its connection; session/delete and "
                           "session/set_model cannot be routed")
    router.route_request(AGENT_METHODS["session_delete"], DeleteSessionRequest, agent,
                         "delete_session", adapt_result=normalize_result)
    router.route_request(SET_MODEL, SetSessionModelRequest, agent, "set_session_model",
                         adapt_result=normalize_result)
    return conn
