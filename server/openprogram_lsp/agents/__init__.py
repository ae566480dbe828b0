"""Agent definitions: named kinds of child agent read from ``.openprogram/agents/*.md`` and
``.claude/agents/*.md`` (``definitions``)."""
