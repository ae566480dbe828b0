"""docs/configuration.md lists every variable the code reads or sets."""

from __future__ import annotations

import re
from pathlib import Path

from openprogram_lsp.config import load_sections

ROOT = Path(__file__).resolve().parents[2]


def _table() -> set[str]:
    text = (ROOT / "docs" / "configuration.md").read_text()
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", text, re.M))


def test_every_section_variable_is_in_the_table() -> None:
    declared = {v.name for kind in load_sections().values() for v in kind.env.values()}
    assert declared - _table() == set()


def test_every_openprogram_variable_in_the_code_is_in_the_table() -> None:
    used: set[str] = set()
    for folder in ("server", "scripts", "editors/nvim", "editors/vscode/src", "tests", "bench"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".lua", ".ts", ".sh", ""}:
                try:
                    used |= set(re.findall(r"\bOPENPROGRAM_[A-Z0-9]+(?:_[A-Z0-9]+)*\b",
                                           path.read_text(errors="ignore")))
                except OSError:
                    continue
    prefixes = {u for u in used if any(o.startswith(u + "_") for o in used)}
    assert used - prefixes - _table() == set()
