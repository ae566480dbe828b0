"""Everything editors and docs need of the wire, generated from ``lsp/wire.py``.

``python -m openprogram_lsp.lsp.codegen`` rewrites the files; ``--check`` lists stale ones.
"""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.lsp.codegen import docs, lua, typescript
from openprogram_lsp.lsp.codegen.model import Wire, load

TS_PATH = Path("editors/vscode/src/wire.ts")
LUA_PATH = Path("editors/nvim/lua/openprogram/protocol.lua")
DOCS_PATH = Path("docs/protocol.md")


def generated(root: Path, wire: Wire | None = None) -> dict[Path, str]:
    """Each generated file (relative to the repository root) and its fresh content."""
    wire = wire or load()
    current = (root / DOCS_PATH).read_text("utf-8")
    return {TS_PATH: typescript.render(wire), LUA_PATH: lua.render(wire),
            DOCS_PATH: docs.render(wire, current)}


def stale(root: Path) -> list[Path]:
    """Generated files whose committed content differs from a fresh generation."""
    out = []
    for rel, text in generated(root).items():
        path = root / rel
        if not path.exists() or path.read_text("utf-8") != text:
            out.append(rel)
    return out


def write(root: Path) -> list[Path]:
    """Regenerate every file; returns the ones that changed."""
    changed = []
    for rel, text in generated(root).items():
        path = root / rel
        if not path.exists() or path.read_text("utf-8") != text:
            path.write_text(text, "utf-8")
            changed.append(rel)
    return changed
