"""MCP server definitions in the Claude-Code shape, from every source we read them from.

``{"mcpServers": {name: {command, args, env} | {type: "http", url, headers}}}``: a workspace's
``.mcp.json``, the user config file, editor settings, and the servers an ACP client passes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from openprogram_lsp.core.model import Model

Origin = Literal["user", "workspace", "editor", "acp"]
ORIGIN_ORDER: tuple[Origin, ...] = ("user", "workspace", "editor", "acp")
"""Later origins override earlier ones for the same server name."""

TOOL_PREFIX = "mcp__"
MAX_TOOL_NAME = 64  # what the OpenAI and Anthropic APIs accept for a function name
_NAME_OK = re.compile(r"[^A-Za-z0-9_-]")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class StdioServer(Model):
    """A server we start as a subprocess and talk to over its stdin/stdout."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    timeout: float | None = Field(None, gt=0, le=3600)  # seconds per tool call (ours)

    @field_validator("command")
    @classmethod
    def _no_nul(cls, value: str) -> str:
        if "\0" in value:
            raise ValueError("must not contain NUL bytes")
        return value


class HttpServer(Model):
    """A server reached over streamable HTTP."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    type: Literal["http", "streamable-http", "streamableHttp"]
    url: str = Field(min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float | None = Field(None, gt=0, le=3600)

    @field_validator("url")
    @classmethod
    def _http_only(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value


ServerConfig = Annotated[StdioServer | HttpServer, Field(discriminator="type")]


@functools.cache
def _adapter() -> TypeAdapter[StdioServer | HttpServer]:
    """Built on first use: most processes never read an MCP definition."""
    return TypeAdapter(ServerConfig)


@dataclass(frozen=True, slots=True)
class ServerDef:
    """One named server definition and where it came from (or why it is unusable)."""

    name: str
    origin: Origin
    config: StdioServer | HttpServer | None
    raw: dict[str, Any]
    problem: str | None = None

    @property
    def needs_trust(self) -> bool:
        """A workspace file is someone else's code until the user says otherwise; so is an
        editor's ``mcpServers`` (initialization options can come from a workspace's settings,
        or from any client that connects)."""
        return self.origin in ("workspace", "editor")

    @property
    def source(self) -> str:
        """Where the definition was read, for prompts and status."""
        return {"workspace": ".mcp.json", "editor": "the editor's mcpServers setting",
                "user": "your config file", "acp": "the ACP client"}[self.origin]

    @property
    def fingerprint(self) -> str:
        """Identifies the exact definition the user trusted (any change asks again)."""
        blob = json.dumps(self.raw, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(f"{self.name}\0{blob}".encode()).hexdigest()[:32]

    def describe(self) -> str:
        """The command line or URL, for prompts and status."""
        cfg = self.config
        if isinstance(cfg, StdioServer):
            return " ".join([cfg.command, *cfg.args])
        if isinstance(cfg, HttpServer):
            return cfg.url
        return str(self.raw.get("command") or self.raw.get("url") or "?")


def tool_name_part(name: str) -> str:
    """A server or tool name as models accept it in a function name."""
    return _NAME_OK.sub("_", name) or "_"


def full_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, made safe for model APIs (long names keep a hash)."""
    name = f"{TOOL_PREFIX}{tool_name_part(server)}__{tool_name_part(tool)}"
    if len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:MAX_TOOL_NAME - 9]}_{digest}"


def expand_vars(value: str, env: Mapping[str, str]) -> str:
    """``${VAR}`` and ``${VAR:-default}`` as Claude Code expands them (unset: empty)."""
    return _VAR.sub(lambda m: env.get(m.group(1), m.group(2) or ""), value)


def _expand(raw: Any, env: Mapping[str, str]) -> Any:
    if isinstance(raw, str):
        return expand_vars(raw, env)
    if isinstance(raw, list):
        return [_expand(v, env) for v in raw]
    if isinstance(raw, dict):
        return {k: _expand(v, env) for k, v in raw.items()}
    return raw


def _normalise(raw: dict[str, Any]) -> dict[str, Any]:
    """Accept the shapes in the wild: no ``type`` with a url means http; ACP's name/value lists."""
    out = dict(raw)
    if "type" not in out:
        out["type"] = "http" if "url" in out and "command" not in out else "stdio"
    for key in ("env", "headers"):
        value = out.get(key)
        if isinstance(value, list):  # ACP: [{"name": ..., "value": ...}]
            out[key] = {str(item.get("name")): str(item.get("value", ""))
                        for item in value if isinstance(item, dict) and item.get("name")}
    return out


def parse_server(name: str, raw: Any, origin: Origin,
                 env: Mapping[str, str] | None = None) -> ServerDef:
    """One definition; a bad one is kept with its problem so status can show it."""
    if not isinstance(raw, dict):
        return ServerDef(name, origin, None, {"value": raw}, "definition must be an object")
    kind = raw.get("type")
    if kind == "sse":
        return ServerDef(name, origin, None, raw,
                         "the sse transport is not supported; use streamable HTTP")
    data = _normalise(raw)
    try:
        config = _adapter().validate_python(_expand(data, os.environ if env is None else env))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'definition'}: {e['msg']}"
                             for e in exc.errors(include_url=False))
        return ServerDef(name, origin, None, raw, f"invalid definition ({problems})")
    return ServerDef(name, origin, config, raw)


def parse_servers(block: Any, origin: Origin, *,
                  env: Mapping[str, str] | None = None) -> tuple[list[ServerDef], list[str]]:
    """``{name: definition}`` (or a whole file's ``{"mcpServers": ...}``) -> definitions."""
    if isinstance(block, dict) and isinstance(block.get("mcpServers"), dict):
        block = block["mcpServers"]
    if block is None:
        return [], []
    if not isinstance(block, dict):
        return [], [f"{origin} MCP servers must be an object of name -> definition"]
    defs = [parse_server(str(name), raw, origin, env) for name, raw in block.items()]
    return defs, [f"MCP server {d.name!r} ({origin}): {d.problem}" for d in defs if d.problem]


def parse_acp_servers(servers: list[Any]) -> tuple[list[ServerDef], list[str]]:
    """The ``mcpServers`` list of ACP's ``session/new`` (each item carries its ``name``)."""
    block: dict[str, Any] = {}
    problems: list[str] = []
    for item in servers:
        raw = item.model_dump(by_alias=True) if isinstance(item, BaseModel) else item
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            problems.append("an ACP MCP server without a name was ignored")
            continue
        block[raw["name"]] = {k: v for k, v in raw.items() if k != "name"}
    defs, more = parse_servers(block, "acp")
    return defs, problems + more


def read_json_servers(path: Path, origin: Origin) -> tuple[list[ServerDef], list[str]]:
    """Definitions from a ``.mcp.json``-shaped file (missing: none; unreadable: a problem)."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"{path}: {exc.strerror or exc}"]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}"]
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        return [], [f"{path}: expected {{\"mcpServers\": {{name: definition}}}}"]
    return parse_servers(data.get("mcpServers", {}), origin)


def user_config_path() -> Path:
    """``$XDG_CONFIG_HOME/openprogram-lsp/config.toml``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "openprogram-lsp" / "config.toml"


def read_user_servers(path: Path | None = None) -> tuple[list[ServerDef], list[str]]:
    """The ``[mcpServers.<name>]`` tables of the user config file."""
    path = path or user_config_path()
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return [], []
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return [], [f"{path}: {exc}"]
    return parse_servers(data.get("mcpServers"), "user")


def merge(*layers: list[ServerDef]) -> dict[str, ServerDef]:
    """Definitions by name, a later layer replacing an earlier one's server of the same name."""
    out: dict[str, ServerDef] = {}
    for layer in layers:
        for d in layer:
            out[d.name] = d
    return out
