"""Agent definitions: ``.openprogram/agents/<name>.md`` and ``.claude/agents/<name>.md``.

Front matter (a small YAML subset: ``key: value``, ``[a, b]``, ``- item`` lists, ``a, b``
strings) gives ``name``, ``description``, ``tools`` / ``disallowedTools`` (fnmatch patterns,
our tool names or Claude Code's), ``model`` and ``permissionMode``; the body is the child's
system prompt. Admission of the child's tools is the seed's: disallowed, then allowed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openprogram_lsp.core.types import PERMISSION_MODES
from openprogram_lsp.core.types import DefinitionScope as Scope
from openprogram_lsp.tools.claude_tools import TOOLS

MAX_BYTES = 256 * 1024
WORKSPACE_DIRS: tuple[str, ...] = (".claude/agents", ".openprogram/agents")  # later wins
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_FROM_CLAUDE = {alias: ours for ours, m in TOOLS.items() for alias in (m.claude, *m.aliases)}
_MODES = {"default": "ask", "acceptEdits": "accept-edits", "plan": "plan",
          "bypassPermissions": "bypass", "dontAsk": "bypass"}


@dataclass(frozen=True, slots=True)
class AgentDef:
    """A named kind of child agent: its tools, model, mode and system prompt."""

    name: str
    description: str = ""
    tools: tuple[str, ...] | None = None  # None: every tool
    disallowed: tuple[str, ...] = ()
    model: str | None = None  # None or "inherit": the parent's
    permission_mode: str | None = None
    prompt: str = ""
    source: str = ""
    scope: Scope = "workspace"

    @property
    def id(self) -> str:
        """A fingerprint of the whole definition (trust is per id)."""
        blob = json.dumps([self.scope, self.source, self.name, self.description, self.tools,
                           self.disallowed, self.model, self.permission_mode, self.prompt])
        return "a" + hashlib.sha256(blob.encode()).hexdigest()[:15]

    def describe(self) -> dict[str, Any]:
        """The definition as listed and shown for approval."""
        out: dict[str, Any] = {"id": self.id, "name": self.name,
                               "description": self.description, "source": self.source,
                               "scope": self.scope, "disallowedTools": list(self.disallowed)}
        out["tools"] = list(self.tools) if self.tools is not None else None
        if self.model:
            out["model"] = self.model
        if self.permission_mode:
            out["permissionMode"] = self.permission_mode
        out["prompt"] = self.prompt
        return out


def _scalar(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Split a Markdown file into its front matter (a dict) and body."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    meta: dict[str, Any] = {}
    key: str | None = None
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return meta, "\n".join(lines[i + 1:]).strip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = re.match(r"\s+-\s*(.*)$", line) or re.match(r"-\s+(.*)$", line)
        if item and key is not None:
            existing = meta.get(key)
            meta[key] = [*(existing if isinstance(existing, list) else []),
                         _scalar(item.group(1))]
            continue
        m = re.match(r"([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*)$", line)
        if not m:
            raise ValueError(f"front matter line {i + 1} is not `key: value`")
        key, value = m.group(1), m.group(2).strip()
        if value.startswith("[") and value.endswith("]"):
            meta[key] = [_scalar(v) for v in value[1:-1].split(",") if v.strip()]
        elif value in ("", "|", ">"):
            meta[key] = []
        else:
            meta[key] = _scalar(value)
    raise ValueError("front matter is not closed with ---")


def _patterns(value: Any, field: str) -> tuple[str, ...]:
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, list):
        items = [str(v).strip() for v in value]
    else:
        raise ValueError(f"{field} must be a list or a comma-separated string")
    return tuple(_FROM_CLAUDE.get(i, i) for i in items if i)


def parse_agent(text: str, *, stem: str, source: str, scope: Scope) -> AgentDef:
    """One definition from its file's text; ValueError says what is wrong."""
    meta, body = front_matter(text)
    name = str(meta.get("name") or stem)
    if not _NAME.fullmatch(name):
        raise ValueError(f"name {name!r} must be 1-64 letters, digits, '.', '_' or '-'")
    tools = _patterns(meta["tools"], "tools") if "tools" in meta else None
    disallowed = _patterns(meta.get("disallowedTools", meta.get("disallowed_tools", [])),
                           "disallowedTools")
    mode = meta.get("permissionMode", meta.get("permission_mode"))
    if mode is not None:
        mode = _MODES.get(str(mode), str(mode))
        if mode not in PERMISSION_MODES:
            raise ValueError(f"permissionMode {mode!r} is not one of "
                             f"{', '.join(PERMISSION_MODES)}")
    model = meta.get("model")
    model = str(model) if isinstance(model, str) and model else None
    return AgentDef(name=name, description=str(meta.get("description") or ""), tools=tools,
                    disallowed=disallowed, model=model, permission_mode=mode,
                    prompt=body.strip(), source=source, scope=scope)


def load_agents(dirs: Iterable[tuple[Path, str, Scope]],
                warnings: list[str]) -> dict[str, AgentDef]:
    """Definitions by name from (directory, shown prefix, scope); later directories win."""
    out: dict[str, AgentDef] = {}
    for directory, shown, scope in dirs:
        try:
            if directory.is_symlink() or not directory.is_dir():
                continue
            files = sorted(directory.glob("*.md"))
        except OSError:
            continue
        for path in files:
            source = f"{shown}/{path.name}"
            try:
                if path.is_symlink() or not path.is_file():
                    warnings.append(f"{source}: not a regular file; ignored")
                    continue
                data = path.read_bytes()
                if len(data) > MAX_BYTES:
                    warnings.append(f"{source}: larger than {MAX_BYTES} bytes; ignored")
                    continue
                agent = parse_agent(data.decode("utf-8"), stem=path.stem, source=source,
                                    scope=scope)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                warnings.append(f"{source}: {exc}; ignored")
                continue
            out[agent.name] = agent
    return out
