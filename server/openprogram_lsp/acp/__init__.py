"""The ACP transport: ``openprogram-lsp acp`` over the same dispatcher and stores as ``lsp/``.

The only package that imports the ``acp`` SDK (agent-client-protocol).
"""
