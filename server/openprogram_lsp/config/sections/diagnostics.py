"""``[diagnostics]``: what the editor's language servers report back to the model after edits."""

from __future__ import annotations

from typing import ClassVar

from openprogram_lsp.config.section import EnvVar, Section
from openprogram_lsp.core.diagnostics import DiagnosticsLevel


class DiagnosticsSection(Section):
    """After each edit, the new problems the editor's language servers report."""

    name: ClassVar[str] = "diagnostics"
    env: ClassVar[dict[str, EnvVar]] = {
        "after_edits": EnvVar("OPENPROGRAM_DIAGNOSTICS_AFTER_EDITS",
                              "off, errors or errors_and_warnings"),
    }

    after_edits: DiagnosticsLevel = "errors"
