"""Reading every setting once: defaults < user file < workspace file < environment < flags."""

from __future__ import annotations

import difflib
import functools
import importlib
import os
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, SecretStr, ValidationError

from openprogram_lsp.config import sections as _sections_pkg
from openprogram_lsp.config.files import (
    default_state_root,
    read_toml,
    user_config_path,
    workspace_config_path,
)
from openprogram_lsp.config.section import SECTIONS, Section
from openprogram_lsp.core.errors import ConfigError

S = TypeVar("S", bound=Section)

DEFAULT = "default"


def load_sections() -> dict[str, type[Section]]:
    """Every section: each module under ``config/sections/`` registers its own."""
    for info in pkgutil.iter_modules(_sections_pkg.__path__):
        importlib.import_module(f"{_sections_pkg.__name__}.{info.name}")
    return SECTIONS


@dataclass(frozen=True, slots=True)
class Settings:
    """The validated settings of one workspace and where each value came from."""

    sections: Mapping[str, Section]
    sources: Mapping[str, str]  # dotted key -> "default", a file path, "env X" or "flag --x"
    files: tuple[Path, ...] = ()  # the config files that were read
    workspace: Path | None = None
    trusted: bool = False
    user_path: Path | None = None  # the user config file consulted (present or not)
    _by_type: dict[type[Section], Section] = field(default_factory=dict, repr=False)

    @classmethod
    def defaults(cls) -> Settings:
        """Every section at its default: no file, no environment, no flag."""
        return _defaults()

    def get(self, kind: type[S]) -> S:
        """The section of type ``kind``."""
        found = self.sections.get(kind.name)
        if not isinstance(found, kind):
            raise KeyError(f"no config section {kind.name!r}")
        return found

    @property
    def home(self) -> Path:
        """The state root (sessions, checkpoints, rules): ``home``, which loading always sets."""
        found = self.sections.get("")
        home = getattr(found, "home", None)
        return home if isinstance(home, Path) else default_state_root({})

    def with_section(self, section: Section, source: str) -> Settings:
        """A copy with ``section`` replaced; its set keys are credited to ``source``."""
        name = type(section).name
        changed = {f"{name}.{key}" if name else key: source
                   for key, _ in _flatten(section.model_dump(exclude_unset=True))}
        return Settings(sections={**self.sections, name: section},
                        sources={**self.sources, **changed}, files=self.files,
                        workspace=self.workspace, trusted=self.trusted,
                        user_path=self.user_path)

    def rows(self) -> list[tuple[str, str, str]]:
        """(key, value, source) for every setting, secrets masked, in a stable order."""
        out: list[tuple[str, str, str]] = []
        for name in sorted(self.sections):
            for key, value in _flatten(self.sections[name].model_dump()):
                dotted = f"{name}.{key}" if name else key
                out.append((dotted, _show(value), self.sources.get(dotted, DEFAULT)))
        return out


def load_settings(*, workspace: Path | None = None, env: Mapping[str, str] | None = None,
                  flags: Mapping[str, tuple[Any, str]] | None = None,
                  user_file: bool = True) -> Settings:
    """Read and validate every setting; one ConfigError naming the key and its source."""
    env = os.environ if env is None else env
    kinds = load_sections()
    tree: dict[str, Any] = {}
    sources: dict[str, str] = {}
    files: list[Path] = []
    trusted = False
    user_path = user_config_path(env) if user_file else None
    if user_path is not None:
        path = user_path
        data = read_toml(path)
        if data is not None:
            files.append(path)
            _merge(tree, _split_sections(data, kinds, str(path)), sources, str(path))
    if workspace is not None:
        trusted = _is_trusted(workspace, tree.get("", {}).get("trusted_workspaces"))
        path = workspace_config_path(workspace)
        data = read_toml(path)
        if data is not None:
            files.append(path)
            split = _split_sections(data, kinds, str(path))
            _check_workspace_file(split, kinds, path, trusted)
            _merge(tree, split, sources, str(path))
    _merge(tree, _from_env(env, kinds), sources, None)
    for dotted, (value, label) in (flags or {}).items():
        if value is not None:
            _set(tree, _split_key(dotted, kinds), value)
            sources[dotted] = label
    core = tree.setdefault("", {})
    if not core.get("home"):  # the default state root, from this same environment
        core["home"] = default_state_root(env)
    built: dict[str, Section] = {}
    for name, kind in kinds.items():
        raw = tree.get(name, {})
        try:
            built[name] = kind.model_validate(raw)
        except ValidationError as exc:
            raise ConfigError(_explain(exc, name, raw, sources, kind)) from None
    return Settings(sections=built, sources=sources, files=tuple(files),
                    workspace=workspace, trusted=trusted, user_path=user_path)


@functools.cache
def _defaults() -> Settings:
    return load_settings(env={}, user_file=False)


def _split_sections(data: dict[str, Any], kinds: Mapping[str, type[Section]],
                    origin: str) -> dict[str, Any]:
    """File tables keyed by section name; keys that are not section tables go to ""."""
    out: dict[str, Any] = {"": {}}
    for key, value in data.items():
        if key in kinds and key and isinstance(value, dict):
            out[key] = value
        else:
            out[""][key] = value
    return out


def _check_workspace_file(split: dict[str, Any], kinds: Mapping[str, type[Section]],
                          path: Path, trusted: bool) -> None:
    for name, raw in split.items():
        kind = kinds.get(name)
        if kind is None or not isinstance(raw, dict):
            continue
        for key in sorted(_leaf_keys(raw)):
            if key in kind.user_only or key.rsplit(".", 1)[-1] == "api_key":
                dotted = f"{name}.{key}" if name else key
                raise ConfigError(
                    f"{path}: {dotted} may only be set in your own config file "
                    f"(a workspace file is shared with everyone who clones it)")
        if trusted:
            continue
        risky = kind.untrusted_keys(raw)
        if risky:
            dotted = f"{name}.{risky[0]}" if name else risky[0]
            raise ConfigError(
                f"{path}: {dotted} needs a trusted workspace; add {str(path.parent.parent)!r} "
                f"to trusted_workspaces in your own config.toml, or remove the key")


def _is_trusted(workspace: Path, listed: Any) -> bool:
    if not isinstance(listed, list):
        return False
    here = workspace.resolve()
    return any(isinstance(p, str) and Path(p).expanduser().resolve() == here for p in listed)


def _from_env(env: Mapping[str, str], kinds: Mapping[str, type[Section]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind in kinds.items():
        for key, var in kind.env.items():
            raw = (env.get(var.name) or "").strip()
            if not raw:
                continue
            value: Any = [p.strip() for p in raw.split(",") if p.strip()] if var.split else raw
            _set(out, [name, *key.split(".")], (value, f"env {var.name}"))
    return out


def _merge(tree: dict[str, Any], layer: dict[str, Any], sources: dict[str, str],
           origin: str | None, prefix: tuple[str, ...] = ()) -> None:
    """Leaf-wise override of ``tree`` by ``layer``; env leaves carry their own label."""
    for key, value in layer.items():
        path = (*prefix, key)
        if isinstance(value, dict):
            sub = tree.setdefault(key, {})
            if not isinstance(sub, dict):
                sub = tree[key] = {}
            _merge(sub, value, sources, origin, path)
            continue
        label = origin
        if origin is None:  # env layer: (value, label) pairs
            value, label = value
        tree[key] = value
        sources[".".join(p for p in path if p)] = label or DEFAULT


def _set(tree: dict[str, Any], path: list[str], value: Any) -> None:
    for part in path[:-1]:
        tree = tree.setdefault(part, {})
    tree[path[-1]] = value


def _split_key(dotted: str, kinds: Mapping[str, type[Section]]) -> list[str]:
    head, _, rest = dotted.partition(".")
    return [head, *rest.split(".")] if rest and head in kinds else ["", *dotted.split(".")]


def _leaf_keys(raw: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, value in raw.items():
        if isinstance(value, dict):
            out.extend(_leaf_keys(value, f"{prefix}{key}."))
        else:
            out.append(f"{prefix}{key}")
    return out


def _explain(exc: ValidationError, name: str, raw: Any, sources: Mapping[str, str],
             kind: type[Section]) -> str:
    err = exc.errors(include_url=False)[0]
    loc = [str(p) for p in err["loc"]]
    dotted = ".".join([name, *loc] if name else loc)
    source = _source_of(dotted, sources)
    if err["type"] == "extra_forbidden":
        known = _known_keys(kind, loc[:-1]) + ([n for n in SECTIONS if n] if not name
                                                and len(loc) == 1 else [])
        close = difflib.get_close_matches(loc[-1], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"{source}: unknown setting {dotted!r}{hint}"
    msg = str(err["msg"]).replace("Input should be", "must be").replace("Value error, ", "")
    shown = _show(err.get("input"))
    more = len(exc.errors()) - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    if source.startswith("env "):
        given = err.get("input")
        if isinstance(given, list):  # a comma-separated variable: shown as it was set
            shown = repr(",".join(str(v) for v in given))
        return f"{source[4:]}={shown}: {msg}{tail}"
    if source.startswith("flag "):
        return f"{source[5:]} {shown}: {msg}{tail}"
    return f"{source}: {dotted} = {shown}: {msg}{tail}"


def _source_of(dotted: str, sources: Mapping[str, str]) -> str:
    """The source of a key, or of the nearest table above it that has one."""
    key = dotted
    while key:
        if key in sources:
            return sources[key]
        hits = [s for k, s in sources.items() if k.startswith(key + ".")]
        if hits:
            return hits[0]
        key = key.rpartition(".")[0]
    return DEFAULT


def _known_keys(kind: type[BaseModel], path: list[str]) -> list[str]:
    model: type[BaseModel] | None = kind
    for part in path:
        info = model.model_fields.get(part) if model is not None else None
        ann = info.annotation if info else None
        model = next((a for a in (ann, *get_args(ann)) if isinstance(a, type)
                      and issubclass(a, BaseModel)), None)
        if model is None:
            return []
    return list(model.model_fields) if model is not None else []


def _flatten(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(data, dict):
        out: list[tuple[str, Any]] = []
        for key in data:
            out.extend(_flatten(data[key], f"{prefix}{key}."))
        return out
    return [(prefix[:-1], data)]


def _show(value: Any) -> str:
    if isinstance(value, SecretStr):
        return "***"
    if value is None:
        return "(unset)"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "(none)"
    return repr(value) if isinstance(value, str) else str(value)
