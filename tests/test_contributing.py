"""Every file and folder CONTRIBUTING.md and examples/README.md name exists (the guide cannot
rot)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BASES = (REPO, REPO / "server" / "openprogram_lsp", REPO / "editors" / "nvim",
         REPO / "editors" / "vscode")
"""Where a named path may be relative to: the repository, the package, an editor's folder."""
PATHLIKE = re.compile(r"^[\w.\-]+(/[\w.\-]*)*$")
SUFFIXES = (".py", ".md", ".lua", ".ts", ".mjs", ".sh", ".toml", ".json")


def named_paths(text: str) -> list[str]:
    """The code spans that are paths: a folder (with a slash) or a file with a known suffix."""
    spans = re.findall(r"`([^`\n]+)`", text)
    words = [w for s in spans for w in s.split() if PATHLIKE.match(w)]
    return [w for w in words if ("/" in w and not w.startswith(("openprogram/", "session/")))
            or (w.endswith(SUFFIXES) and w != ".mcp.json")]  # a user's file, not ours


@pytest.mark.parametrize("doc", ["CONTRIBUTING.md", "examples/README.md"])
def test_every_named_path_exists(doc: str) -> None:
    paths = named_paths((REPO / doc).read_text("utf-8"))
    assert len(paths) > 10 if doc == "CONTRIBUTING.md" else paths
    bases = [(REPO / doc).parent, *BASES]
    missing = []
    for path in paths:  # a short name may be relative to a folder named before it
        found = next((base / path for base in bases if (base / path).exists()), None)
        if found is None:
            missing.append(path)
        elif (folder := found if found.is_dir() else found.parent) not in bases:
            bases.append(folder)
    assert missing == []
