"""Approvals: what a tool call needs before it runs. Permission modes (``modes``), the rules
an "always" answer leaves and what each covers (``rules``, judged on a call's ``facts``), the
workspace's rule book (``rulebook``), and the options of an approval prompt (``choices``)."""
