"""One branch of a session as listed: its tip, where it forked, and its code state."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BranchRow:
    """A branch tip with its name, chain length, preview and (when known) its code state."""

    head_id: str
    active: bool
    length: int
    preview: str = ""
    name: str | None = None
    fork_id: str | None = None  # the first node of the branch's own part (none: main line)
    forked_from: str | None = None  # the node the branch continues after
    started_at: str | None = None  # when its own part began
    start_preview: str | None = None  # the first line of its first own message
    code_checkpoint_id: str | None = None  # the checkpoint of its newest turn
    code_differs: bool | None = None  # that state differs from the workspace's newest
