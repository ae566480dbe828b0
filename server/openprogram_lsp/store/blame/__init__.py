"""Agent blame: which turn, branch, tool call and approval last changed each line."""
