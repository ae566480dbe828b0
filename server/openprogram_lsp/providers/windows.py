"""Context-window sizes of models, from the model table (``context.window`` overrides them all;
``[models."NAME"] context_window`` one model)."""

from __future__ import annotations

from openprogram_lsp.providers.models import DEFAULT_WINDOW, model_info


def context_window_for(spec: str, override: int | None = None) -> int:
    """The context window for a model spec: the override, else the table, else a default."""
    if override is not None:
        return override
    kind, _, model = spec.partition(":")
    if kind not in ("openai", "anthropic"):
        return DEFAULT_WINDOW
    return model_info(kind, model).context
