"""``[http]``: timeouts and retries of the remote providers."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from openprogram_lsp.config.section import EnvVar, Section


class HttpSection(Section):
    """Timeouts (seconds) and the retry policy of model requests."""

    name: ClassVar[str] = "http"
    env: ClassVar[dict[str, EnvVar]] = {
        "connect_timeout": EnvVar("OPENPROGRAM_HTTP_CONNECT_TIMEOUT", "seconds to connect"),
        "read_timeout": EnvVar("OPENPROGRAM_HTTP_READ_TIMEOUT", "seconds between stream bytes"),
        "max_retries": EnvVar("OPENPROGRAM_MAX_RETRIES", "retries of a failed model request"),
        "max_retry_wait": EnvVar("OPENPROGRAM_MAX_RETRY_WAIT",
                                 "longest Retry-After honoured, seconds"),
    }

    connect_timeout: float = Field(10.0, ge=0)
    read_timeout: float = Field(300.0, ge=0)
    max_retries: int = Field(4, ge=0)
    max_retry_wait: float = Field(90.0, ge=0)
