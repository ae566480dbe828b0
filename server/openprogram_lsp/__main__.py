"""``python -m openprogram_lsp`` runs the command line."""

from openprogram_lsp.cli import main

raise SystemExit(main())
