"""``[providers.openai]`` and ``[providers.anthropic]``: base URLs and where the key comes from."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Mapping
from typing import ClassVar
from urllib.parse import urlsplit

from pydantic import ConfigDict, SecretStr, field_validator

from openprogram_lsp.config.section import EnvVar, Section
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.core.model import Model
from openprogram_lsp.core.secrets import remember_value, withhold

KEY_COMMAND_TIMEOUT = 15.0


class Endpoint(Model):
    """One provider's endpoint; the key from ``api_key``, ``api_key_command`` or a variable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None
    api_key_env: str | None = None  # the variable holding the key (default OPENAI_API_KEY...)
    api_key_command: str | None = None  # a command printing the key, e.g. "pass show openai"
    api_key: SecretStr | None = None  # only in your own config file

    @field_validator("base_url")
    @classmethod
    def _http(cls, v: str | None) -> str | None:
        if v is not None and urlsplit(v.strip()).scheme not in ("http", "https"):
            raise ValueError(f"must be an http(s) URL, got {v!r}")
        return v.strip() if v else None

    def key(self, env: Mapping[str, str], default_env: str) -> str:
        """The API key ("" when none is configured); ConfigError when the command fails.
        Whatever it is, tool output never shows it from now on (``core.secrets.redact``)."""
        if self.api_key is not None:
            key = self.api_key.get_secret_value().strip()
        elif self.api_key_command:
            key = _run_key_command(self.api_key_command)
        else:
            if self.api_key_env:
                withhold(self.api_key_env)  # commands never see it, /proc does not show it
            key = (env.get(self.api_key_env or default_env) or "").strip()
        remember_value(key)
        return key

    def withhold_key(self, default_env: str) -> None:
        """Before any key is read: the variable that holds it is withheld from commands and
        from ``/proc``, and its value (or the config's own ``api_key``) is redacted."""
        if self.api_key is not None:
            remember_value(self.api_key.get_secret_value())
        withhold(self.api_key_env or default_env)


    def key_source(self, env: Mapping[str, str], default_env: str) -> tuple[bool | None, str]:
        """Whether a key is configured (None: only a command would tell, not run here) and
        where from, never the key itself (``openprogram-lsp config``)."""
        if self.api_key is not None:
            return bool(self.api_key.get_secret_value().strip()), "api_key in a config file"
        if self.api_key_command:
            return None, f"api_key_command {self.api_key_command!r} (not run by config)"
        name = self.api_key_env or default_env
        return bool((env.get(name) or "").strip()), f"${name}"


def _run_key_command(command: str) -> str:
    try:
        argv = shlex.split(command)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=KEY_COMMAND_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"api_key_command {command!r} failed: {exc}") from None
    if done.returncode != 0:
        raise ConfigError(f"api_key_command {command!r} exited with {done.returncode}")
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise ConfigError(f"api_key_command {command!r} printed nothing")
    return lines[0].strip()


class ProviderSettings(Section):
    """Endpoints of the remote providers."""

    name: ClassVar[str] = "providers"
    env: ClassVar[dict[str, EnvVar]] = {
        "openai.base_url": EnvVar("OPENAI_BASE_URL", "OpenAI-compatible server"),
        "anthropic.base_url": EnvVar("ANTHROPIC_BASE_URL", "Anthropic API server"),
    }
    needs_trust: ClassVar[frozenset[str]] = frozenset(
        f"{p}.{k}" for p in ("openai", "anthropic")
        for k in ("base_url", "api_key_env", "api_key_command"))

    openai: Endpoint = Endpoint()
    anthropic: Endpoint = Endpoint()

    def withhold_keys(self) -> None:
        """``Endpoint.withhold_key`` for each provider (the default variables by name)."""
        self.openai.withhold_key("OPENAI_API_KEY")
        self.anthropic.withhold_key("ANTHROPIC_API_KEY")

