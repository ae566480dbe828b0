"""The base of every settings section and the registry sections join by subclassing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ConfigDict

from openprogram_lsp.core.model import Model


@dataclass(frozen=True, slots=True)
class EnvVar:
    """An environment variable that sets one key of a section."""

    name: str
    doc: str
    split: bool = False  # a comma-separated list


class Section(Model):
    """A table of config.toml (``name``; "" is the top level) validated by pydantic.

    Subclasses set ``name`` and may declare ``env`` (key -> variable), ``user_only`` (keys a
    workspace file may never set) and ``needs_trust`` (keys a workspace file may set only when
    the user trusts that workspace). Defining the subclass registers it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ClassVar[str]
    env: ClassVar[dict[str, EnvVar]] = {}
    user_only: ClassVar[frozenset[str]] = frozenset()
    needs_trust: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            if cls.name in SECTIONS and SECTIONS[cls.name] is not cls:
                raise TypeError(f"config section {cls.name!r} is defined twice")
            SECTIONS[cls.name] = cls

    @classmethod
    def untrusted_keys(cls, raw: dict[str, Any]) -> list[str]:
        """Keys of a workspace file's ``raw`` table that need the workspace to be trusted."""
        return sorted(k for k in _leaves(raw) if k in cls.needs_trust)


SECTIONS: dict[str, type[Section]] = {}


def _leaves(raw: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, value in raw.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out.extend(_leaves(value, dotted + "."))
        out.append(dotted)
    return out
