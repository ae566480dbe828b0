"""Where the config files live and how they are read."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openprogram_lsp.core.errors import ConfigError

WORKSPACE_FILE = Path(".openprogram") / "config.toml"


def user_config_path(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/openprogram-lsp/config.toml`` (default ``~/.config``)."""
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "openprogram-lsp" / "config.toml"


def default_state_root(env: Mapping[str, str]) -> Path:
    """``${XDG_DATA_HOME:-~/.local/share}/openprogram-lsp``: the state root when none is set."""
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "openprogram-lsp"


def workspace_config_path(workspace: Path) -> Path:
    """The optional ``.openprogram/config.toml`` of a workspace."""
    return workspace / WORKSPACE_FILE


def read_toml(path: Path) -> dict[str, Any] | None:
    """The file's tables, None when it does not exist; ConfigError naming file and line."""
    try:
        if path.is_symlink() and path.parent.name == ".openprogram":
            raise ConfigError(f"{path}: a workspace config file must not be a symlink")
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    except (PermissionError, IsADirectoryError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.__class__.__name__})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({os.strerror(exc.errno or 0)})") from None
