"""Agent definitions: named kinds of child agent, parsed from ``.openprogram/agents/*.md`` and
Claude Code's ``.claude/agents/*.md`` (``definitions``), and where and when they are read
(``catalog``). Whether a workspace's definitions are trusted is the hook engine's
(``hooks/engine.py``), which asks about hooks and agent definitions together."""
