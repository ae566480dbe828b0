"""Context-window sizes of known models, from the model table (``context.window`` overrides
them all; ``[models."NAME"] context_window`` one model)."""

from __future__ import annotations

from openprogram_lsp.providers.models import (
    DEFAULT_WINDOW,
    UNKNOWN_ANTHROPIC,
    UNKNOWN_OPENAI_COMPATIBLE,
    known_model,
    model_info,
)

__all__ = ["DEFAULT_WINDOW", "UNKNOWN_ANTHROPIC", "UNKNOWN_OPENAI_COMPATIBLE",
           "context_window_for", "known_window"]


def known_window(model: str, kind: str = "openai") -> int | None:
    """The table's window for a model name, or None when the name is not recognised."""
    info = known_model(kind, model)
    return info.context if info is not None else None


def context_window_for(spec: str, override: int | None = None) -> int:
    """The context window for a model spec: the override, else the table, else a default."""
    if override is not None:
        return override
    kind, _, model = spec.partition(":")
    if kind not in ("openai", "anthropic"):
        return DEFAULT_WINDOW
    return model_info(kind, model).context
