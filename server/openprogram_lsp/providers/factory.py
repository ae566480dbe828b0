"""Model specs (offline, scripted:FILE, openai:M, anthropic:M) turned into providers."""

from __future__ import annotations

import os
from collections.abc import Mapping

from openprogram_lsp.config import Settings, load_settings
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.providers.base import Provider
from openprogram_lsp.providers.offline import OfflineProvider
from openprogram_lsp.providers.scripted import ScriptedProvider

DEFAULT_MODEL = "offline"


def resolve_model_spec(*candidates: str | None) -> str:
    """The first non-empty spec among candidates (in precedence order), else the default."""
    for c in candidates:
        if c and c.strip():
            return c.strip()
    return DEFAULT_MODEL


def make_provider(spec: str, env: Mapping[str, str] | None = None, *,
                  settings: Settings | None = None) -> Provider:
    """Build the provider a spec names; a clear ConfigError when it cannot.

    ``settings`` are the validated settings the turn runs with; without them, those of a given
    ``env`` alone, else the defaults (the process environment is read by ``app``, once).
    ``env`` is where key variables are looked up."""
    if settings is None:
        settings = Settings.defaults() if env is None else load_settings(env=env, user_file=False)
    env = os.environ if env is None else env
    kind, _, arg = spec.partition(":")
    if kind == "offline":
        return OfflineProvider()
    if kind == "scripted":
        if not arg:
            raise ConfigError("model 'scripted:FILE' needs a file path")
        return ScriptedProvider(arg, record=settings.get(CoreSettings).scripted_log)
    if kind in ("openai", "anthropic"):
        if not arg:
            raise ConfigError(f"model '{kind}:MODEL' needs a model name")
        try:
            from openprogram_lsp.providers import remote
        except ImportError:
            raise ConfigError(f"the {kind} provider is not available in this build") from None
        return remote.make_remote(kind, arg, settings, env)
    raise ConfigError(
        f"unknown model {spec!r}: use offline, scripted:FILE, openai:MODEL or anthropic:MODEL")
