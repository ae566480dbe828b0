"""Approvals: what a tool call needs before it runs. Permission modes (``modes``), the rules
an "always" answer leaves and what each covers (``rules``, judged on a call's ``facts``), the
workspace's rule book (``rulebook``), and the options of an approval prompt (``choices``).

Elsewhere, by design: the prompt itself is the editor's (``core.ports.Approver``, asked by
``agent/tool_exec.py``); the record of each answer is the session's
(``store/approval_records.py``); trust in a workspace's hooks and agent definitions is the hook
engine's (``hooks/trust.py``, ``hooks/approval.py``)."""
