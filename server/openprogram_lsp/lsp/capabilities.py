"""The standard LSP features and commands the server registers, declared where they are cheap.

``initialize`` is answered before the server is built (``lsp.early``), from this declaration;
``build_server`` checks that what it registered is exactly this (``check``), so the early
answer and the server's own can never differ. Imports nothing beyond lsprotocol.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types as t

SYNC_KIND = t.TextDocumentSyncKind.Incremental
"""How editors send document changes (``textDocument/didChange``)."""

FEATURES: dict[str, Any] = {
    t.INITIALIZE: None,
    t.INITIALIZED: None,
    t.SHUTDOWN: None,
    t.WORKSPACE_DID_CHANGE_CONFIGURATION: None,
    t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: None,
    t.TEXT_DOCUMENT_DID_SAVE: None,
    t.TEXT_DOCUMENT_CODE_LENS: t.CodeLensOptions(resolve_provider=False),
    t.TEXT_DOCUMENT_HOVER: None,
    t.TEXT_DOCUMENT_CODE_ACTION: t.CodeActionOptions(
        code_action_kinds=[t.CodeActionKind.RefactorRewrite, t.CodeActionKind.QuickFix]),
}
"""Standard methods the server registers a handler for, with their options (None: none)."""

COMMANDS: tuple[str, ...] = (
    "openprogram.server.restoreAgentHunk", "openprogram.server.blameInfo",
    "openprogram.server.askAgent", "openprogram.server.fixWithAgent",
)
"""``workspace/executeCommand`` names, in the order the server registers them."""


def check(features: dict[str, Any], options: dict[str, Any], commands: list[str]) -> None:
    """Raise unless a server's registry (a pygls ``FeatureManager``'s ``features``,
    ``feature_options`` and ``commands``) holds exactly the declared standard features,
    options and commands (``openprogram/*`` methods do not show in capabilities)."""
    standard = {name for name in features if not name.startswith("openprogram/")}
    declared = {name: value for name, value in FEATURES.items() if value is not None}
    registered = {name: options[name] for name in standard if name in options}
    if standard != set(FEATURES) or registered != declared or tuple(commands) != COMMANDS:
        raise RuntimeError(
            "the server's standard features or commands differ from lsp/capabilities.py "
            f"(registered {sorted(standard)}, {registered}, {commands}): declare them there, "
            "or initialize answered before the server is built would leave them out")
