"""openprogram-lsp: an AI coding agent framework hosted in a language server."""

__version__ = "0.1.0"
