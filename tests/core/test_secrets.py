"""Which variables count as credentials, and their values gone from /proc/<pid>/environ."""

from __future__ import annotations

import os
import subprocess
import sys

from openprogram_lsp.core.secrets import is_secret_name, withhold
from openprogram_lsp.tools.procs import scrubbed_env


def test_secret_names() -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "GITHUB_TOKEN",
                 "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "DB_PASSWORD", "MY_SECRET"):
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "MONKEY", "KEYBOARD", "TOKENIZERS_PARALLELISM", "LANG"):
        assert not is_secret_name(name), name


def test_a_configured_key_variable_is_withheld() -> None:
    os.environ["MY_LLM_CREDS_9"] = "v"
    try:
        assert "MY_LLM_CREDS_9" in scrubbed_env()
        withhold("MY_LLM_CREDS_9")  # what [providers.openai] api_key_env = "..." does
        assert "MY_LLM_CREDS_9" not in scrubbed_env()
    finally:
        del os.environ["MY_LLM_CREDS_9"]


def test_values_gone_from_proc_names_and_python_copy_kept() -> None:
    code = ("from openprogram_lsp.core.secrets import conceal_from_proc; import os, sys; "
            "print(conceal_from_proc()); "
            "raw = open('/proc/self/environ', 'rb').read(); "
            "assert b'sk-proc-test-1' not in raw and b'OPENAI_API_KEY=' in raw, raw; "
            "assert os.environ['OPENAI_API_KEY'] == 'sk-proc-test-1'; "
            "import subprocess; print(subprocess.run(['sh', '-c', 'echo $OPENAI_API_KEY'], "
            "capture_output=True, text=True).stdout.strip())")
    env = {**os.environ, "OPENAI_API_KEY": "sk-proc-test-1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    lines = done.stdout.splitlines()
    assert "OPENAI_API_KEY" in lines[0]
    assert lines[1] == "sk-proc-test-1"  # children started without env= are as before


def test_configured_key_values_are_redacted_and_a_split_one_is_held_back() -> None:
    from openprogram_lsp.core.secrets import REDACTED, partial_tail, redact, remember_value
    remember_value("short")  # too short to redact without eating ordinary words
    remember_value("  cmd-key-6b1d2e3f4a  \n")  # as a key command prints it
    assert redact("x cmd-key-6b1d2e3f4a y short") == f"x {REDACTED} y short"
    assert partial_tail("output ends cmd-key-6b") == len("cmd-key-6b")
    assert partial_tail("ordinary output\n") == 0


def test_the_endpoint_key_of_a_key_command_is_redacted_from_then_on() -> None:
    from openprogram_lsp.config.sections.providers import Endpoint
    from openprogram_lsp.core.secrets import REDACTED, redact
    key = Endpoint(api_key_command="printf from-a-command-77c1e0").key({}, "OPENAI_API_KEY")
    assert key == "from-a-command-77c1e0"
    assert redact(f"echo {key}") == f"echo {REDACTED}"


def test_a_withheld_variable_is_withheld_before_any_key_is_read() -> None:
    from openprogram_lsp.config.sections.providers import ProviderSettings
    from openprogram_lsp.core.secrets import REDACTED, redact
    os.environ["MY_EARLY_KEY_VAR"] = "early-value-5e4d3c2b"
    try:
        ProviderSettings.model_validate(
            {"openai": {"api_key_env": "MY_EARLY_KEY_VAR"}}).withhold_keys()
        assert "MY_EARLY_KEY_VAR" not in scrubbed_env()
        assert redact("early-value-5e4d3c2b") == REDACTED
    finally:
        del os.environ["MY_EARLY_KEY_VAR"]
