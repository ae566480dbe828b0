"""ContextVars that bind the running turn, so deep code attributes work to it."""

from __future__ import annotations

from contextvars import ContextVar

current_session_id: ContextVar[str | None] = ContextVar("op_session_id", default=None)
current_turn_id: ContextVar[str | None] = ContextVar("op_turn_id", default=None)
current_agent_id: ContextVar[str | None] = ContextVar("op_agent_id", default=None)
current_message_depth: ContextVar[int] = ContextVar("op_message_depth", default=0)
# what the session's SessionStart hooks put in CLAUDE_ENV_FILE: the environment its shell
# commands get on top of the server's (hooks.env_file)
command_env: ContextVar[dict[str, str] | None] = ContextVar("op_command_env", default=None)
