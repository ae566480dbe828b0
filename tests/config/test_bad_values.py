"""Every variable with a bad value is one clear line naming it, from the model, CLI and server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.config import Settings, load_sections, load_settings
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core.errors import ConfigError
from tests.forkserver import run_command

BAD: dict[str, str] = {
    "OPENPROGRAM_MODEL": "gpt-4o",
    "OPENPROGRAM_MODEL_MENU": "offline,gpt-4o",
    "OPENPROGRAM_PERMISSION_MODE": "wild",
    "OPENPROGRAM_MAX_ITERATIONS": "0",
    "OPENPROGRAM_SESSION_CACHE_CAP": "many",
    "OPENPROGRAM_MAX_FRAME_BYTES": "abc",
    "OPENPROGRAM_CHECKPOINT_MAX_FILE_BYTES": "-5",
    "OPENPROGRAM_CHECKPOINT_MAX_COUNT": "lots",
    "OPENPROGRAM_CHECKPOINT_MAX_AGE_DAYS": "0",
    "OPENPROGRAM_CHECKPOINT_MAX_FILES": "1.5",
    "OPENPROGRAM_CONTEXT_WINDOW": "tiny",
    "OPENPROGRAM_CONTEXT_RECOMMEND": "1.5",
    "OPENPROGRAM_CONTEXT_AUTO_COMPACT": "half",
    "OPENPROGRAM_CONTEXT_GAP_SECONDS": "-1",
    "OPENPROGRAM_CONTEXT_TARGET": "1",
    "OPENPROGRAM_CONTEXT_COOLDOWN_TURNS": "-2",
    "OPENPROGRAM_POLICY_DESTRUCTIVE_COMMANDS": "perhaps",
    "OPENPROGRAM_POLICY_UNTESTED_EDITS": "2",
    "OPENPROGRAM_HTTP_CONNECT_TIMEOUT": "-1",
    "OPENPROGRAM_HTTP_READ_TIMEOUT": "soon",
    "OPENPROGRAM_MAX_RETRIES": "-2",
    "OPENPROGRAM_MAX_RETRY_WAIT": "x",
    "OPENPROGRAM_MCP_STARTUP_TIMEOUT": "0",
    "OPENPROGRAM_MCP_TOOL_TIMEOUT": "-1",
    "OPENAI_BASE_URL": "ftp://example.invalid",
    "ANTHROPIC_BASE_URL": "localhost:8000",
    "OPENPROGRAM_SANDBOX": "maybe",
    "OPENPROGRAM_DIAGNOSTICS_AFTER_EDITS": "warnings",
    "OPENPROGRAM_SANDBOX_NETWORK": "sometimes",
    "OPENPROGRAM_SANDBOX_MAX_PROCESSES": "-3",
    "OPENPROGRAM_SANDBOX_MAX_MEMORY_MB": "lots",
}
"""A value each variable refuses."""

ANY_VALUE: dict[str, str] = {
    "OPENPROGRAM_HOME": "a path: any text names one (an unusable one is refused when used)",
    "OPENPROGRAM_SCRIPTED_LOG": "a path the scripted model appends to (tests)",
    "OPENPROGRAM_CHECKPOINT_EXCLUDES": "gitignore patterns: any text is a pattern",
    "OPENPROGRAM_DISABLED_TOOLS": "fnmatch patterns: any text is a pattern",
}
"""Variables no value of which is malformed, and why."""


def test_every_variable_has_a_bad_value_or_a_reason_it_has_none() -> None:
    declared = {v.name for kind in load_sections().values() for v in kind.env.values()}
    assert declared == set(BAD) | set(ANY_VALUE)
    assert not set(BAD) & set(ANY_VALUE)


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_value_is_one_line_naming_the_variable(name: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(env={name: BAD[name]}, user_file=False)
    message = info.value.message
    assert message.startswith(f"{name}={BAD[name]!r}: "), message
    assert "\n" not in message and "Traceback" not in message and "pydantic" not in message


def test_the_app_config_reads_no_environment(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENPROGRAM_MAX_ITERATIONS", "abc")
    monkeypatch.setenv("OPENPROGRAM_CONTEXT_WINDOW", "tiny")
    cfg = AppConfig(workspace=tmp_path, home=tmp_path / "home")  # built from what it is given
    assert cfg.settings is Settings.defaults() and cfg.max_iterations == 50
    d = build_dispatcher(cfg)
    assert d.services.runtime.settings is cfg.settings
    assert d.services.context.config.window_override is None


def test_a_bad_checkpoint_limit_in_a_workspace_file_is_its_error_not_the_defaults(
        tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    ws = tmp_path / "ws"
    (ws / ".openprogram").mkdir(parents=True)
    bad = ws / ".openprogram" / "config.toml"
    bad.write_text("[checkpoints]\nmax_count = 0\n")
    base = load_settings(env=env, workspace=tmp_path)
    d = build_dispatcher(AppConfig(workspace=tmp_path, home=tmp_path / "home", settings=base,
                                   settings_for=lambda w: load_settings(env=env, workspace=w)))
    with pytest.raises(ConfigError, match=rf"^{bad}: checkpoints\.max_count = 0: must be"):
        d.checkpointer(ws)
    bad.write_text("[checkpoints]\nmax_count = 3\n")  # fixed: the next use builds the store
    assert d.checkpointer(ws) is not None


def _run(args: list[str], tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**{k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")},
            "OPENPROGRAM_HOME": str(tmp / "home"), "XDG_CONFIG_HOME": str(tmp / "xdg"), **env}
    return run_command([sys.executable, "-m", "openprogram_lsp", *args], cwd=tmp, env=full,
                       timeout=60)


@pytest.mark.parametrize("args", [["serve"], ["sessions"]])
def test_the_server_and_the_cli_refuse_to_start_with_that_one_line(tmp_path: Path,
                                                                   args: list[str]) -> None:
    done = _run(args, tmp_path, OPENPROGRAM_MCP_TOOL_TIMEOUT="-1")
    assert done.returncode == 2
    assert done.stderr == ("openprogram-lsp: error: OPENPROGRAM_MCP_TOOL_TIMEOUT='-1': "
                           "must be greater than 0\n")
    assert done.stdout == ""


def test_the_settings_hold_the_scripted_log_so_nothing_reads_it_later() -> None:
    s = load_settings(env={"OPENPROGRAM_SCRIPTED_LOG": "/tmp/x.jsonl"}, user_file=False)
    assert s.get(CoreSettings).scripted_log == Path("/tmp/x.jsonl")
