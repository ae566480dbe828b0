"""Evaluation tasks: a folder each, read and checked before anything runs.

A task folder holds ``task.toml`` (``title``, ``kind``, ``prompt``, ``check``, optional
``timeout``), ``repo/`` (the fixture repository the agent starts in), optional ``hidden/``
(files copied over the workspace only when the check runs, so the agent can neither read nor
change them) and scripted solutions (``<name>.json``: the scripted model's responses, one per
model call; ``solution.json`` is the reference one).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from openprogram_lsp.core.errors import ConfigError

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_KEYS = {"title", "kind", "prompt", "check", "timeout"}
DEFAULT_CHECK_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class Task:
    """One task: where its files are and what decides whether it was solved."""

    id: str
    title: str
    kind: str
    prompt: str
    check: str  # a shell command run in the workspace; ``{python}`` is this interpreter
    check_timeout: float
    folder: Path

    @property
    def repo(self) -> Path:
        """The fixture repository."""
        return self.folder / "repo"

    @property
    def hidden(self) -> Path:
        """Files laid over the workspace for the check only (may not exist)."""
        return self.folder / "hidden"

    def solution(self, name: str = "solution") -> Path | None:
        """The scripted solution ``name`` (``<name>.json``), if the task has one."""
        path = self.folder / f"{name}.json"
        return path if path.is_file() else None


def _text(data: dict[str, object], key: str, where: Path) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: '{key}' must be a non-empty string")
    return value.strip()


def load_task(folder: Path) -> Task:
    """Read and check one task folder."""
    where = folder / "task.toml"
    if not _ID.match(folder.name):
        raise ConfigError(f"{folder}: a task folder's name must be lowercase letters, digits, "
                          "'-' or '_'")
    try:
        data = tomllib.loads(where.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{folder}: no task.toml") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    timeout = data.get("timeout", DEFAULT_CHECK_TIMEOUT)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 0 < timeout <= 3600:
        raise ConfigError(f"{where}: 'timeout' must be seconds between 0 and 3600")
    if not (folder / "repo").is_dir():
        raise ConfigError(f"{folder}: no repo/ folder (the fixture repository)")
    return Task(id=folder.name, title=_text(data, "title", where), kind=_text(data, "kind", where),
                prompt=_text(data, "prompt", where), check=_text(data, "check", where),
                check_timeout=float(timeout), folder=folder)


def load_tasks(root: Path = TASKS_DIR, only: list[str] | None = None) -> list[Task]:
    """Every task under ``root`` in name order, or the ones named in ``only`` in that order."""
    if not root.is_dir():
        raise ConfigError(f"no task folder {str(root)!r}")
    folders = {p.name: p for p in root.iterdir() if (p / "task.toml").is_file()}
    if only:
        missing = [name for name in only if name not in folders]
        if missing:
            raise ConfigError(f"no task {', '.join(map(repr, missing))} in {root} "
                              f"(tasks: {', '.join(sorted(folders)) or 'none'})")
        return [load_task(folders[name]) for name in dict.fromkeys(only)]
    if not folders:
        raise ConfigError(f"no tasks in {root} (a task is a folder with a task.toml)")
    return [load_task(folders[name]) for name in sorted(folders)]
