"""Settings: layers and their sources, validation errors, the workspace file's limits."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from openprogram_lsp.config import load_settings, user_config_path
from openprogram_lsp.config.sections.checkpoints import CheckpointSection
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.config.sections.providers import ProviderSettings
from openprogram_lsp.core.errors import ConfigError
from openprogram_lsp.providers.factory import make_provider


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}


def test_layers_override_each_other_and_remember_where_each_value_came_from(
        tmp_path: Path, env: dict[str, str]) -> None:
    user = _write(user_config_path(env), 'model = "openai:gpt-4o"\nmax_iterations = 9\n'
                                         "[checkpoints]\nmax_count = 5\nmax_files = 7\n")
    ws = tmp_path / "ws"
    wfile = _write(ws / ".openprogram" / "config.toml",
                   'permission_mode = "plan"\n[checkpoints]\nmax_count = 6\n')
    s = load_settings(workspace=ws, env={**env, "OPENPROGRAM_MAX_ITERATIONS": "3"},
                      flags={"model": ("offline", "flag --model")})
    core, cps = s.get(CoreSettings), s.get(CheckpointSection)
    assert (core.model, core.max_iterations, core.permission_mode) == ("offline", 3, "plan")
    assert (cps.max_count, cps.max_files, cps.max_age_days) == (6, 7, 30.0)
    assert s.sources["model"] == "flag --model"
    assert s.sources["max_iterations"] == "env OPENPROGRAM_MAX_ITERATIONS"
    assert s.sources["permission_mode"] == str(wfile)
    assert s.sources["checkpoints.max_files"] == str(user)
    assert s.sources.get("checkpoints.max_age_days", "default") == "default"
    assert s.files == (user, wfile)


@pytest.mark.parametrize("text, message", [
    ("[checkpoints]\nmax_count = -1\n", r"config\.toml: checkpoints\.max_count = -1: must be"),
    ("[checkpoints]\nmax_cuont = 3\n", r"unknown setting 'checkpoints\.max_cuont' "
                                       r"\(did you mean 'max_count'\?\)"),
    ("[chekpoints]\nmax_count = 3\n", r"unknown setting 'chekpoints' \(did you mean "
                                      r"'checkpoints'\?\)"),
    ('model = "gpt-4o"\n', r"model = 'gpt-4o': unknown model; use offline"),
    ("model = \n", r"config\.toml: not valid TOML"),
    ("[providers.openai]\nbase_url = 'ftp://x'\n", r"base_url = 'ftp://x': must be an http"),
])
def test_a_bad_value_is_one_line_naming_file_key_and_value(
        env: dict[str, str], text: str, message: str) -> None:
    _write(user_config_path(env), text)
    with pytest.raises(ConfigError) as info:
        load_settings(env=env)
    assert re.search(message, info.value.message), info.value.message
    assert "\n" not in info.value.message


def test_a_bad_variable_names_the_variable(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=r"^OPENPROGRAM_CHECKPOINT_MAX_COUNT='lots': must be"):
        load_settings(env={**env, "OPENPROGRAM_CHECKPOINT_MAX_COUNT": "lots"})


@pytest.mark.parametrize("text", [
    "[providers.openai]\napi_key = 'sk-secret'\n",
    "home = '/tmp/elsewhere'\n",
    "trusted_workspaces = ['/']\n",
])
def test_a_workspace_file_never_holds_keys_or_user_only_settings(
        tmp_path: Path, env: dict[str, str], text: str) -> None:
    ws = tmp_path / "ws"
    _write(ws / ".openprogram" / "config.toml", text)
    with pytest.raises(ConfigError, match="may only be set in your own config file"):
        load_settings(workspace=ws, env=env)


@pytest.mark.parametrize("text", [
    "[providers.openai]\nbase_url = 'https://attacker.example/v1'\n",  # would get your key
    "[providers.anthropic]\napi_key_command = 'sh -c evil'\n",  # would run on open
    "[providers.openai]\napi_key_env = 'AWS_SECRET_ACCESS_KEY'\n",
    "permission_mode = 'bypass'\n",
    "model = 'scripted:steps.json'\n",
])
def test_a_workspace_file_can_act_for_you_only_when_you_trust_the_workspace(
        tmp_path: Path, env: dict[str, str], text: str) -> None:
    ws = tmp_path / "ws"
    _write(ws / ".openprogram" / "config.toml", text)
    with pytest.raises(ConfigError, match="needs a trusted workspace"):
        load_settings(workspace=ws, env=env)
    _write(user_config_path(env), f"trusted_workspaces = [{str(ws)!r}]\n")
    assert load_settings(workspace=ws, env=env).trusted


def test_a_workspace_may_tighten_the_mode_without_trust(tmp_path: Path,
                                                        env: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    _write(ws / ".openprogram" / "config.toml", "permission_mode = 'plan'\nmodel = 'offline'\n")
    assert load_settings(workspace=ws, env=env).get(CoreSettings).permission_mode == "plan"


def test_a_symlinked_workspace_file_is_refused(tmp_path: Path, env: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    (ws / ".openprogram").mkdir(parents=True)
    secret = _write(tmp_path / "secret.toml", "x = 1\n")
    (ws / ".openprogram" / "config.toml").symlink_to(secret)
    with pytest.raises(ConfigError, match="must not be a symlink"):
        load_settings(workspace=ws, env=env)


def test_the_key_comes_from_a_command_or_a_named_variable(tmp_path: Path,
                                                          env: dict[str, str]) -> None:
    printer = _write(tmp_path / "key.py", "print('sk-from-command')\n")
    _write(user_config_path(env),
           f"[providers.openai]\napi_key_command = '{sys.executable} {printer}'\n"
           "[providers.anthropic]\napi_key_env = 'MY_ANTHROPIC'\n")
    s = load_settings(env=env)
    openai = make_provider("openai:gpt-4o", env, settings=s)
    assert openai._api_key == "sk-from-command"  # type: ignore[attr-defined]
    assert "sk-from-command" not in repr(openai)
    anthropic = make_provider("anthropic:claude-x", {"MY_ANTHROPIC": "k2"}, settings=s)
    assert anthropic._api_key == "k2"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"^MY_ANTHROPIC is not set"):
        make_provider("anthropic:claude-x", {}, settings=s)


def test_a_key_in_your_own_file_is_never_shown(env: dict[str, str]) -> None:
    _write(user_config_path(env), "[providers.openai]\napi_key = 'sk-in-file-123456'\n")
    s = load_settings(env=env)
    assert make_provider("openai:gpt-4o", {}, settings=s)._api_key == "sk-in-file-123456"  # type: ignore[attr-defined]
    shown = {k: v for k, v, _ in s.rows()}
    assert shown["providers.openai.api_key"] == "***"
    assert "sk-in-file" not in repr(s)


def test_a_failing_key_command_is_one_clear_error(tmp_path: Path, env: dict[str, str]) -> None:
    _write(user_config_path(env), "[providers.openai]\napi_key_command = 'false'\n")
    s = load_settings(env=env)
    with pytest.raises(ConfigError, match="api_key_command 'false' exited with 1"):
        make_provider("openai:gpt-4o", env, settings=s)
    assert s.get(ProviderSettings).openai.api_key is None


def test_a_command_reads_the_environment_once_for_every_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp import cli
    from openprogram_lsp.config.sections.core import CoreSettings

    args = cli.build_parser().parse_args(["serve"])
    monkeypatch.setenv("OPENPROGRAM_MAX_ITERATIONS", "7")
    first = cli._settings(args, None)
    monkeypatch.setenv("OPENPROGRAM_MAX_ITERATIONS", "9")  # the process's copy is not re-read
    folder = tmp_path / "folder"
    folder.mkdir()
    later = cli._settings(args, folder)  # an editor folder's settings, later in the same serve
    assert first.get(CoreSettings).max_iterations == later.get(CoreSettings).max_iterations == 7
    assert later.workspace == folder


def test_the_state_root_is_a_setting_with_its_default_from_the_same_environment(
        tmp_path: Path) -> None:
    from openprogram_lsp.config import load_settings

    data = tmp_path / "data"
    assert load_settings(env={"XDG_DATA_HOME": str(data)}, user_file=False).home == (
        data / "openprogram-lsp")
    named = load_settings(env={"XDG_DATA_HOME": str(data), "OPENPROGRAM_HOME": "~/state"},
                          user_file=False)
    assert named.home == Path("~/state").expanduser()
    assert dict((k, s) for k, _, s in named.rows())["home"] == "env OPENPROGRAM_HOME"
