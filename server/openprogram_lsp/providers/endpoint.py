"""What the HTTP providers share: their endpoint, key, window and settings, and how the
settings configure them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Self

from openprogram_lsp.config.sections.providers import Endpoint
from openprogram_lsp.providers.http import HttpSettings, resolve_endpoint
from openprogram_lsp.providers.models import ModelInfo, model_info


class HttpProvider:
    """Base of providers reached over HTTP; subclasses name their variables and defaults."""

    name: str
    BASE_ENV: ClassVar[str]
    KEY_ENV: ClassVar[str]
    DEFAULT_BASE_URL: ClassVar[str]
    OFFICIAL_HOST: ClassVar[str]
    HINT: ClassVar[str]  # what else to point the base URL at when no key is set

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str = "",
                 context_window: int | None = None,
                 settings: HttpSettings | None = None, info: ModelInfo | None = None) -> None:
        self.model = model
        self.base_url = (base_url or self.DEFAULT_BASE_URL).rstrip("/")
        self._api_key = api_key
        self.info = info if info is not None else model_info(self.name, model)
        self.context_window = context_window or self.info.context
        self.max_output_tokens = self.info.output_tokens  # what each request asks for
        self.settings = settings or HttpSettings()

    @classmethod
    def from_config(cls, model: str, endpoint: Endpoint, env: Mapping[str, str], *,
                    context_window: int, settings: HttpSettings,
                    info: ModelInfo | None = None) -> Self:
        """Build from the configured endpoint (base URL, key source); ConfigError when needed."""
        base, key = resolve_endpoint(endpoint, env, base_env=cls.BASE_ENV, key_env=cls.KEY_ENV,
                                     default_base=cls.DEFAULT_BASE_URL,
                                     official_host=cls.OFFICIAL_HOST, hint=cls.HINT)
        return cls(model, base_url=base, api_key=key, context_window=context_window,
                   settings=settings, info=info)

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"
