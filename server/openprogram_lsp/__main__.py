"""``python -m openprogram_lsp`` runs the command line."""

from openprogram_lsp.launch import main

raise SystemExit(main())
