"""Splitting a shell command into the simple commands it runs (bashlex, a port of bash's parser).

A part is one simple command as written: its words, assignments and redirections joined by one
space, quotes kept. Lists (``;``, ``&&``, ``||``, ``&``, newlines), pipelines, subshells and
brace groups are split; command and process substitutions (``$(…)``, backticks, ``<(…)``) are
parts of their own as well as text of the command that holds them. Anything the walk does not
fully account for (functions, ``if``/``for``/``case``, here-documents, arithmetic, a parse error,
text the tree does not cover) is one opaque part: the whole command, which only a rule naming
that exact text can allow.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

_SEPARATORS = frozenset(" \t\r\n;&|()")


class _Opaque(Exception):
    """The command uses something the walk does not split."""


def split_command(command: str) -> list[str]:
    """The simple commands of ``command``, in source order, without duplicates."""
    return list(_split(command.strip()))


@lru_cache(maxsize=512)  # a call is split for its rules, its prompt and the hook gates
def _split(text: str) -> tuple[str, ...]:
    if not text:
        return ("",)
    import bashlex  # type: ignore[import-untyped]  # imported on first use: it is slow to load
    import bashlex.errors  # type: ignore[import-untyped]

    try:
        trees = bashlex.parse(text)
        parts: list[str] = []
        spans: list[tuple[int, int]] = []
        for tree in trees:
            _walk(tree, text, parts, spans)
        _check_covered(text, spans)
    except (_Opaque, bashlex.errors.ParsingError, NotImplementedError, IndexError, TypeError,
            ValueError, AttributeError, AssertionError, RecursionError):
        return (text,)
    out: list[str] = []
    for part in parts:
        if part and part not in out:
            out.append(part)
    return tuple(out) or (text,)


def _walk(node: Any, src: str, parts: list[str], spans: list[tuple[int, int]]) -> None:
    kind = node.kind
    if kind in ("list", "pipeline"):
        for child in node.parts:
            if child.kind in ("operator", "pipe"):
                spans.append(tuple(child.pos))
            else:
                _walk(child, src, parts, spans)
    elif kind == "compound":
        words = [c for c in node.list if c.kind == "reservedword"]
        if [w.word for w in words] not in (["(", ")"], ["{", "}"]):
            raise _Opaque  # if / for / while / case ...
        for child in node.list:
            if child.kind == "reservedword":
                spans.append(tuple(child.pos))
            else:
                _walk(child, src, parts, spans)
        for redirect in getattr(node, "redirects", None) or []:
            raise _Opaque(redirect)  # ( … ) > file: keep it whole
    elif kind == "command":
        spans.append(tuple(node.pos))
        pieces: list[str] = []
        for child in node.parts:
            if child.kind not in ("word", "assignment", "redirect"):
                raise _Opaque
            if child.kind == "redirect" and getattr(child, "heredoc", None) is not None:
                raise _Opaque  # a here-document body may expand $(…)
            start, end = child.pos
            pieces.append(src[start:end])
        parts.append(" ".join(pieces))
        for child in node.parts:
            _substitutions(child, src, parts)
    else:
        raise _Opaque


def _substitutions(node: Any, src: str, parts: list[str]) -> None:
    """Add the commands run by ``$(…)``, backticks and ``<(…)`` inside a word or redirect."""
    kind = node.kind
    if kind in ("commandsubstitution", "processsubstitution"):
        inner: list[str] = []
        _walk(node.command, src, inner, [])
        parts.extend(inner)
        return
    if kind == "parameter" and ("$(" in node.value or "`" in node.value):
        raise _Opaque  # ${x:-$(cmd)}: bashlex does not parse inside
    for attr in ("parts", "output"):
        value = getattr(node, attr, None)
        children = value if isinstance(value, list) else [value] if value is not None else []
        for child in children:
            if hasattr(child, "kind"):
                _substitutions(child, src, parts)


def _check_covered(src: str, spans: list[tuple[int, int]]) -> None:
    """Every character outside the nodes is a separator or a comment; else the walk missed
    something bash would run."""
    covered = [False] * len(src)
    for start, end in spans:
        for i in range(max(0, start), min(len(src), end)):
            covered[i] = True
    i = 0
    while i < len(src):
        if covered[i] or src[i] in _SEPARATORS:
            i += 1
            continue
        if src[i] == "#" and (i == 0 or src[i - 1] in " \t\n;&|()"):
            while i < len(src) and src[i] != "\n":
                i += 1
            continue
        raise _Opaque(f"uncovered text at {i}")
