"""The console script: Ctrl-C while the command is still importing ends it quietly too."""

from __future__ import annotations

import sys


def main() -> int:
    """Run ``openprogram_lsp.cli.main``; an interrupt during start-up exits 130, one line."""
    if sys.argv[1:] == ["--version"]:  # answered before the heavy imports (editors' health checks)
        from openprogram_lsp import __version__

        sys.stdout.write(f"openprogram-lsp {__version__}\n")
        return 0
    try:
        from openprogram_lsp.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:
        sys.stderr.write("\nopenprogram-lsp: interrupted\n")
        return 130
