"""The edit a user approved: exactly the text shown on the card, and what may be written.

An edit tool given an ``ApprovedEdit`` writes ``new_text`` only where the file (or the editor's
unsaved buffer) still holds ``old_text``, the text the user saw: a file changed since the
prompt is refused, never edited into content nobody approved. With some hunks rejected,
``new_text`` is the shown old text with only the accepted hunks applied, and ``note()`` tells
the model which hunks were written and which were not.
"""

from __future__ import annotations

from dataclasses import dataclass

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.text_hunks import MAX_HUNKED_CHARS, TooCostly, apply_some, show, spans
from openprogram_lsp.core.types import DiffPreview, PreviewHunk

MAX_NOTE_CHARS = 6000  # of the rejected hunks quoted back to the model
HUNK_BUDGET = 1.0  # seconds an approval card may spend splitting an edit into hunks


def preview_hunks(diff: DiffPreview) -> list[PreviewHunk] | None:
    """The hunks an approval card lists for ``diff`` (None: it is approved whole: a stand-in
    old text, or texts too large or too costly to split within ``HUNK_BUDGET`` seconds)."""
    if not diff.exact or len(diff.old_text) + len(diff.new_text) > MAX_HUNKED_CHARS:
        return None
    try:
        parts = spans(diff.old_text, diff.new_text, budget=HUNK_BUDGET)
    except TooCostly:
        return None
    return [PreviewHunk(index=i, old_start=s.old_start, old_lines=s.old_lines,
                        new_start=s.new_start, new_lines=s.new_lines, header=s.header)
            for i, s in enumerate(parts)]


@dataclass(frozen=True, slots=True)
class ApprovedEdit:
    """What the user approved of an edit: the shown ``old_text`` and the text to write."""

    path: str
    old_text: str
    new_text: str  # the proposed text, or the old text with only the accepted hunks
    shown_new: str  # the proposed text as shown
    in_buffer: bool  # the old text was the editor's unsaved buffer
    accepted: tuple[int, ...] | None = None  # None: the whole edit
    total: int = 0  # hunks on the card

    @classmethod
    def of(cls, diff: DiffPreview, accepted: list[int] | None) -> ApprovedEdit:
        """The approval of ``diff`` (``accepted`` already checked against its hunks)."""
        total = len(diff.hunks or [])
        whole = accepted is None or len(accepted) == total
        return cls(path=diff.path, old_text=diff.old_text,
                   new_text=diff.new_text if whole
                   else apply_some(diff.old_text, diff.new_text, accepted or []),
                   shown_new=diff.new_text, in_buffer=bool(diff.unsaved_changes),
                   accepted=None if whole else tuple(sorted(accepted or [])), total=total)

    @property
    def partial(self) -> bool:
        """Some hunks were rejected."""
        return self.accepted is not None

    def check(self, current: str | None, *, in_buffer: bool) -> None:
        """Refuse when the text about to be changed is not what the user was shown
        (``current`` None: the file does not exist)."""
        if (current or "") != self.old_text or in_buffer != self.in_buffer:
            where = "its editor buffer" if in_buffer or self.in_buffer else "the file"
            raise ToolError(f"{self.path}: {where} changed after the user was shown this edit, "
                            "so the approval does not cover it; nothing was written. Read the "
                            "file again and redo the edit")

    def note(self) -> str:
        """For the model: which hunks were written and which the user rejected (quoted)."""
        if self.accepted is None:
            return ""
        rejected = [i for i in range(self.total) if i not in self.accepted]
        parts = spans(self.old_text, self.shown_new)
        quoted = "\n".join(show(self.old_text, self.shown_new, parts[i]) for i in rejected)
        if len(quoted) > MAX_NOTE_CHARS:
            quoted = quoted[:MAX_NOTE_CHARS] + "\n[... cut]"
        applied = ", ".join(str(i) for i in self.accepted)
        return (f"The user reviewed the change hunk by hunk and accepted {len(self.accepted)} of "
                f"{self.total} hunks: applied hunks {applied}; rejected hunks "
                f"{', '.join(str(i) for i in rejected)} (hunks numbered from 0 in file order), "
                f"which were NOT written:\n{quoted}\nThe file holds only the applied hunks; "
                "read it before editing it again.")
