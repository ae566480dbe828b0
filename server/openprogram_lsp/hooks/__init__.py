"""User extensions: hooks (tool gates and observers), built-in policies, agent definitions."""
