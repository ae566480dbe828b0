"""The settings one turn runs with: its workspace's config files, then the driving editor's."""

from __future__ import annotations

from pathlib import Path

from openprogram_lsp.config import Settings
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.config.sections.models import ModelsSection
from openprogram_lsp.config.sections.providers import Endpoint, ProviderSettings
from openprogram_lsp.core.types import ClientOptions
from openprogram_lsp.dispatcher.services import Services

KEY_SOURCES = ("api_key", "api_key_env", "api_key_command")
EDITOR = "editor settings"


def with_editor_providers(settings: Settings, providers: dict[str, dict[str, str]]) -> Settings:
    """``[providers]`` with the editor's base URLs and key sources laid over the files'.

    An editor naming a key variable or command replaces the file's key source, so the key
    comes from where the editor says."""
    section = settings.get(ProviderSettings)
    update: dict[str, Endpoint] = {}
    for name, given in providers.items():
        current = getattr(section, name, None)
        if not isinstance(current, Endpoint) or not given:
            continue
        base = current.model_dump(exclude_none=True)
        if any(k in given for k in KEY_SOURCES):
            base = {k: v for k, v in base.items() if k not in KEY_SOURCES}
        update[name] = Endpoint.model_validate({**base, **given})
    if not update:
        return settings
    merged = ProviderSettings.model_validate({**dict(section), **update})
    return settings.with_section(merged, EDITOR)


def withhold_keys(settings: Settings | None) -> None:
    """Withhold and redact the keys ``settings`` configure (at start, and for each turn's
    settings, which may carry an editor's ``apiKeyEnv``): see ``Endpoint.withhold_key``."""
    if settings is not None:
        settings.get(ProviderSettings).withhold_keys()


def turn_settings(services: Services, workspace: Path, options: ClientOptions) -> Settings | None:
    """The workspace's settings with the editor's provider overrides (None: none known); the
    keys they configure are withheld from commands and redacted from tool output."""
    base = services.workspace_settings(workspace)
    if base is None or not options.providers:
        withhold_keys(base)
        return base
    merged = with_editor_providers(base, options.providers)
    withhold_keys(merged)
    return merged


def default_model(services: Services, settings: Settings | None) -> str | None:
    """The model a turn runs with when neither the request nor the editor names one."""
    if services.settings_for is not None and settings is not None:
        return settings.get(CoreSettings).model
    return services.default_model


def with_effort(settings: Settings, spec: str, effort: str) -> Settings:
    """``[models."NAME"] effort`` of the turn's model set to ``effort`` (a client's reasoning
    effort for its session), over whatever the files say of that model."""
    kind, _, name = spec.partition(":")
    if kind not in ("openai", "anthropic") or not name:
        return settings
    section = settings.get(ModelsSection)
    raw = {k: v.model_dump(exclude_none=True) for k, v in (section.model_extra or {}).items()}
    raw[name] = {**raw.get(name, {}), "effort": effort}
    return settings.with_section(ModelsSection.model_validate(raw), EDITOR)
