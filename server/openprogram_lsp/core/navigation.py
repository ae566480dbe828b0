"""What the editor's language servers answer to a navigation question (typed, wire-free)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

NavigationKind = Literal["definition", "references", "hover", "documentSymbols",
                         "workspaceSymbols"]


@dataclass(frozen=True, slots=True)
class Place:
    """A file position (absolute path, 0-based line and UTF-16 character)."""

    path: Path
    line: int
    character: int = 0


@dataclass(frozen=True, slots=True)
class Symbol:
    """A named symbol: its LSP kind number, where it starts, what contains it."""

    name: str
    kind: int
    place: Place | None
    container: str = ""


@dataclass(slots=True)
class Navigation:
    """The answer: places (definition, references), symbols, or hover text."""

    places: list[Place] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)
    hover: str = ""
    servers: list[str] = field(default_factory=list)
