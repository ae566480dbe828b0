"""Building the remote providers (``openai:MODEL``, ``anthropic:MODEL``) from the environment."""

from __future__ import annotations

from collections.abc import Mapping

from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.providers.anthropic import AnthropicProvider
from openprogram_lsp.providers.base import Provider
from openprogram_lsp.providers.http import HttpSettings, aclose_shared_client
from openprogram_lsp.providers.openai import OpenAIProvider
from openprogram_lsp.providers.windows import context_window_for

__all__ = ["aclose_shared_client", "context_window_for", "make_remote"]


def make_remote(kind: str, model: str, env: Mapping[str, str],
                settings: HttpSettings | None = None) -> Provider:
    """The provider for ``kind:model``; ConfigError naming the variable that is missing."""
    settings = settings or HttpSettings.from_env(env)
    window = context_window_for(f"{kind}:{model}", env)
    if kind == "openai":
        return OpenAIProvider.from_env(model, env, context_window=window, settings=settings)
    if kind == "anthropic":
        return AnthropicProvider.from_env(model, env, context_window=window, settings=settings)
    raise ConfigError(f"unknown remote provider {kind!r}: use openai or anthropic")
