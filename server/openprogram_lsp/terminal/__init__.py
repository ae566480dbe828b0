"""What the command line needs besides parsing: one-line errors, terminal prompts, and
finding the workspace, session and checkpoint a command is about."""
