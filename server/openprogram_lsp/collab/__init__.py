"""Collaboration: subagents, send_message, list_agents, lanes, replies and the task runner."""
