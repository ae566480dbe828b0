"""``python -m openprogram_lsp.lsp.codegen [--check] [ROOT]``."""

from __future__ import annotations

import sys
from pathlib import Path

from openprogram_lsp.lsp.codegen import stale, write


def main(argv: list[str]) -> int:
    """Regenerate (or with ``--check`` only list) the wire's generated files."""
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    root = Path(args[0]) if args else Path.cwd()
    files = stale(root) if check else write(root)
    for rel in files:
        print(f"{'stale' if check else 'wrote'}: {rel}")
    return 1 if check and files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
