"""What an edit did to a file's diagnostics: the errors and warnings it introduced and fixed.

Pure: the editor's language servers give the diagnostics before and after an edit; an edit
moves lines, so a diagnostic counts as the same when its severity, source, code and message are
(each one matched once: two identical errors before and three after is one new error).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

DiagnosticsLevel = Literal["off", "errors", "errors_and_warnings"]

ERROR, WARNING = 1, 2
MAX_LISTED = 20  # per file, in what the model is told
MAX_MESSAGE = 300


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One diagnostic as a language server published it (0-based line, LSP severity)."""

    line: int
    message: str
    severity: int = ERROR  # 1 error, 2 warning, 3 information, 4 hint
    source: str = ""
    code: str = ""
    character: int = 0

    @property
    def key(self) -> tuple[int, str, str, str]:
        """What makes two diagnostics the same across an edit (their lines may move)."""
        return (self.severity, self.source, self.code, " ".join(self.message.split()))


def wanted(diags: list[Diagnostic], level: DiagnosticsLevel) -> list[Diagnostic]:
    """The diagnostics ``level`` reports (errors, or errors and warnings)."""
    top = {"off": 0, "errors": ERROR, "errors_and_warnings": WARNING}[level]
    return [d for d in diags if d.severity <= top]


def compare(before: list[Diagnostic], after: list[Diagnostic],
            level: DiagnosticsLevel) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(introduced, fixed) by an edit, at ``level``, each in line order."""
    old, new = wanted(before, level), wanted(after, level)
    left = Counter(d.key for d in old)
    introduced = []
    for d in sorted(new, key=lambda d: (d.line, d.character)):
        if left[d.key] > 0:
            left[d.key] -= 1
        else:
            introduced.append(d)
    still = Counter(d.key for d in new)
    fixed = []
    for d in sorted(old, key=lambda d: (d.line, d.character)):
        if still[d.key] > 0:
            still[d.key] -= 1
        else:
            fixed.append(d)
    return introduced, fixed


def _line(d: Diagnostic) -> str:
    kind = "error" if d.severity == ERROR else "warning"
    message = " ".join(d.message.split())
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + "…"
    origin = "/".join(x for x in (d.source, d.code) if x)
    return f"  line {d.line + 1}: {kind}: {message}" + (f" [{origin}]" if origin else "")


def report(path: str, introduced: list[Diagnostic], fixed: list[Diagnostic]) -> str:
    """What the model is told about one file ("" when the edit changed nothing it reports)."""
    if not introduced and not fixed:
        return ""
    parts = []
    if introduced:
        parts.append(f"The editor's language servers report {len(introduced)} new problem(s) "
                     f"in {path} after this edit:")
        parts += [_line(d) for d in introduced[:MAX_LISTED]]
        if len(introduced) > MAX_LISTED:
            parts.append(f"  … and {len(introduced) - MAX_LISTED} more")
    if fixed:
        parts.append(f"It fixed {len(fixed)} problem(s) reported before in {path}.")
    return "\n".join(parts)
