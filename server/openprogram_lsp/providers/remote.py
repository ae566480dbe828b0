"""Building the remote providers (``openai:MODEL``, ``anthropic:MODEL``) from the settings."""

from __future__ import annotations

from collections.abc import Mapping

from openprogram_lsp.config import Settings
from openprogram_lsp.config.sections.context import ContextSection
from openprogram_lsp.config.sections.http import HttpSection
from openprogram_lsp.config.sections.models import ModelsSection
from openprogram_lsp.config.sections.providers import ProviderSettings
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.providers.anthropic import AnthropicProvider
from openprogram_lsp.providers.base import Provider
from openprogram_lsp.providers.http import HttpSettings, aclose_shared_client
from openprogram_lsp.providers.models import model_info
from openprogram_lsp.providers.openai import OpenAIProvider
from openprogram_lsp.providers.windows import context_window_for

__all__ = ["aclose_shared_client", "context_window_for", "make_remote"]


def make_remote(kind: str, model: str, settings: Settings, env: Mapping[str, str],
                http: HttpSettings | None = None) -> Provider:
    """The provider for ``kind:model``; ConfigError naming what is missing."""
    http = http or HttpSettings.from_config(settings.get(HttpSection))
    info = model_info(kind, model, settings.get(ModelsSection).overrides())
    window = settings.get(ContextSection).window or info.context
    endpoints = settings.get(ProviderSettings)
    if kind == "openai":
        return OpenAIProvider.from_config(model, endpoints.openai, env, context_window=window,
                                          settings=http, info=info)
    if kind == "anthropic":
        return AnthropicProvider.from_config(model, endpoints.anthropic, env,
                                             context_window=window, settings=http, info=info)
    raise ConfigError(f"unknown remote provider {kind!r}: use openai or anthropic")
