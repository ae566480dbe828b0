"""The agent run: the model-tool loop, steering, follow-ups, cancel, subagents."""
