"""``openprogram-lsp config`` and config files through the real command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.forkserver import run_command


def run(args: list[str], tmp: Path, cwd: Path | None = None,
        **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "OPENPROGRAM_HOME": str(tmp / "home"),
            "XDG_CONFIG_HOME": str(tmp / "xdg"), **env}
    full.pop("OPENPROGRAM_MODEL", None)
    return run_command([sys.executable, "-m", "openprogram_lsp", *args], cwd=cwd or tmp,
                       env=full, timeout=60)


def _user_file(tmp: Path, text: str) -> Path:
    path = tmp / "xdg" / "openprogram-lsp" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_prints_each_setting_with_its_source(tmp_path: Path) -> None:
    user = _user_file(tmp_path, "[checkpoints]\nmax_count = 7\n")
    ws = tmp_path / "ws"
    (ws / ".openprogram").mkdir(parents=True)
    (ws / ".openprogram" / "config.toml").write_text("permission_mode = 'plan'\n")
    r = run(["config", "--workspace", str(ws), "--json", "--model", "offline"], tmp_path,
            OPENPROGRAM_MAX_ITERATIONS="4")
    assert r.returncode == 0, r.stderr
    rows = {row["key"]: (row["value"], row["source"]) for row in json.loads(r.stdout)["settings"]}
    assert rows["checkpoints.max_count"] == ("7", str(user))
    assert rows["permission_mode"] == ("'plan'", str(ws / ".openprogram" / "config.toml"))
    assert rows["max_iterations"] == ("4", "env OPENPROGRAM_MAX_ITERATIONS")
    assert rows["model"] == ("'offline'", "flag --model")
    assert rows["http.read_timeout"] == ("300.0", "default")
    text = run(["config", "--workspace", str(ws)], tmp_path)
    assert text.returncode == 0 and str(user) in text.stdout
    assert any(ln.startswith("checkpoints.max_count") and ln.endswith(str(user))
               for ln in text.stdout.splitlines())


def test_the_user_file_sets_the_model_and_limits_of_a_turn(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "list_dir", "arguments": {}}]}] * 3))
    _user_file(tmp_path, f"model = 'scripted:{script}'\nmax_iterations = 2\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    r = run(["chat", "--workspace", str(ws), "spin"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "limit of 2 model calls" in r.stdout


def test_a_bad_config_file_is_one_line_and_no_session(tmp_path: Path) -> None:
    path = _user_file(tmp_path, "max_iterations = 0\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    r = run(["chat", "--workspace", str(ws), "hi"], tmp_path)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert f"{path}: max_iterations = 0: must be greater than or equal to 1" in r.stderr
    assert not (tmp_path / "home" / "sessions").exists() or not any(
        (tmp_path / "home" / "sessions").iterdir())


def test_config_says_whether_each_key_was_found_never_its_value(tmp_path: Path) -> None:
    _user_file(tmp_path, "[providers.anthropic]\napi_key_env = 'MY_CLAUDE_KEY'\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    r = run_command([sys.executable, "-m", "openprogram_lsp", "config"], cwd=tmp_path,
                    env={**env, "OPENPROGRAM_HOME": str(tmp_path / "home"),
                         "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                         "MY_CLAUDE_KEY": "sk-secret-value-123"}, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "# openai API key: not found ($OPENAI_API_KEY)" in r.stdout
    assert "# anthropic API key: found ($MY_CLAUDE_KEY)" in r.stdout
    assert "sk-secret-value-123" not in r.stdout + r.stderr
    j = run(["config", "--json"], tmp_path, OPENAI_API_KEY="sk-other")
    keys = json.loads(j.stdout)["keys"]
    assert keys["openai"] == {"found": True, "source": "$OPENAI_API_KEY"}
    assert "sk-other" not in j.stdout
