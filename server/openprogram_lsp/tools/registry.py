"""The tool registry and static admission (fnmatch: disabled, then allowed, then categories)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from typing import Any

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


def first_sentence(text: str) -> str:
    """A description's first sentence (up to the first '. ' outside backticks), whole when it
    has one sentence."""
    ticks = 0
    for i, ch in enumerate(text):
        if ch == "`":
            ticks += 1
        elif ch == "." and ticks % 2 == 0 and text[i + 1:i + 2] in (" ", "\n"):
            return text[:i + 1]
    return text


def _brief_schema(schema: Any) -> Any:
    """A JSON Schema without its parameters' descriptions (names, types, enums and bounds
    stay): in a small window the tool's own first sentence says what it is for, and the
    parameters' words cost more than the 6k-window budget has (tests/context/test_headroom)."""
    if isinstance(schema, list):
        return [_brief_schema(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _brief_schema(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema.get("properties"), dict):  # the names here are fields, not keywords
        out["properties"] = {n: _brief_schema(v) for n, v in schema["properties"].items()}
    return out


class ToolRegistry:
    """Tools by name; duplicate names are refused."""

    def __init__(self, tools: Iterable[Tool] = (), *, refused: Iterable[str] = (),
                 brief: bool = False) -> None:
        self._tools: dict[str, Tool] = {}
        self._refused = frozenset(refused)
        self._specs: tuple[ToolSpec, ...] | None = None
        self._brief: tuple[ToolSpec, ...] | None = None
        self.is_brief = brief  # the specs say less (a model with a small window)
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add a tool; a second tool with the same name is an error."""
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._specs = self._brief = None

    def get(self, name: str) -> Tool | None:
        """The tool with this name, if any."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered tool names."""
        return list(self._tools)

    def tools(self) -> list[Tool]:
        """Registered tools, in registration order."""
        return list(self._tools.values())

    def refused(self, name: str) -> bool:
        """Whether static admission left this tool out of the registry."""
        return name in self._refused

    def with_tools(self, tools: Iterable[Tool]) -> ToolRegistry:
        """A registry with more tools (a name already taken keeps its first tool)."""
        out = ToolRegistry(self._tools.values(), refused=self._refused, brief=self.is_brief)
        for tool in tools:
            if tool.name not in out._tools:
                out.register(tool)
        return out

    def admitted(self, *, disabled: Sequence[str] = (), allowed: Sequence[str] | None = None,
                 categories: Sequence[str] | None = None) -> ToolRegistry:
        """A registry holding only the tools static admission lets through."""
        keep = {name: admit(t.name, t.category, disabled=disabled, allowed=allowed,
                            categories=categories) for name, t in self._tools.items()}
        return ToolRegistry((t for t in self._tools.values() if keep[t.name]),
                            refused=self._refused | {n for n, ok in keep.items() if not ok},
                            brief=self.is_brief)

    async def aclose(self) -> None:
        """End what the tools still run (background commands), each tool once."""
        for tool in self._tools.values():
            await tool.aclose()

    async def end_session(self, session_id: str) -> None:
        """End what the tools still run for one session (its background commands)."""
        for tool in self._tools.values():
            await tool.end_session(session_id)

    def brief(self) -> ToolRegistry:
        """The same tools, whose specs always say less (``specs(brief=True)``): the registry
        of a turn whose model has a small window, so the request carries what was counted."""
        return ToolRegistry(self._tools.values(), refused=self._refused, brief=True)

    def specs(self, *, brief: bool = False) -> list[ToolSpec]:
        """Every tool's spec, for the model: built once per registry (twice a turn asks), so
        the specs are shared; read them, never change them. ``brief``: each description cut
        to its first sentence and its parameters undescribed, for a window too small for the
        whole guidance."""
        if self._specs is None:
            self._specs = tuple(t.spec() for t in self._tools.values())
        if not (brief or self.is_brief):
            return list(self._specs)
        if self._brief is None:
            self._brief = tuple(s.model_copy(update={
                "description": first_sentence(s.description),
                "input_schema": _brief_schema(s.input_schema)}) for s in self._specs)
        return list(self._brief)
