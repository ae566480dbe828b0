"""``python -m openprogram_lsp``: the command line (``serve`` by default)."""

from openprogram_lsp.cli import main

raise SystemExit(main())
