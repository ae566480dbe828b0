"""The tool registry and static admission (fnmatch: disabled, then allowed, then categories)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from openprogram_lsp.core.types import ToolSpec
from openprogram_lsp.tools.base import Tool


def admit(name: str, category: str, *, disabled: Sequence[str] = (),
          allowed: Sequence[str] | None = None, categories: Sequence[str] | None = None) -> bool:
    """Static admission: disabled refuses, allowed admits, else categories decide."""
    if any(fnmatchcase(name, pat) for pat in disabled):
        return False
    if allowed is not None and any(fnmatchcase(name, pat) for pat in allowed):
        return True
    if categories is not None:
        return any(fnmatchcase(category, pat) for pat in categories)
    return allowed is None


class ToolRegistry:
    """Tools by name; duplicate names are refused."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add a tool; a second tool with the same name is an error."""
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        """The tool with this name, if any."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered tool names."""
        return list(self._tools)

    def admitted(self, *, disabled: Sequence[str] = (), allowed: Sequence[str] | None = None,
                 categories: Sequence[str] | None = None) -> ToolRegistry:
        """A registry holding only the tools static admission lets through."""
        return ToolRegistry(t for t in self._tools.values()
                            if admit(t.name, t.category, disabled=disabled, allowed=allowed,
                                     categories=categories))

    def specs(self) -> list[ToolSpec]:
        """Every tool's spec, for the model."""
        return [t.spec() for t in self._tools.values()]
