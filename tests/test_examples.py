"""Every script in examples/ runs against the offline model (stdio only), so none can rot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
WRITE = "write notes.txt\nhello from an example"


def run(script: str, workspace: Path, home: Path, *args: str,
        model: str = "offline") -> subprocess.CompletedProcess[str]:
    """Run one example as a user would (its own process, this interpreter)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENPROGRAM_")}
    env.update(OPENPROGRAM_HOME=str(home), OPENPROGRAM_MODEL=model)
    return subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=workspace,
                          env=env, capture_output=True, text=True, timeout=180, check=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_every_example_is_listed_in_the_readme_and_tested() -> None:
    readme = (EXAMPLES / "README.md").read_text("utf-8")
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert scripts == ["acp_client.py", "chat_json.py", "lsp_client.py"]
    for name in scripts:
        assert f"`{name}`" in readme and f"python examples/{name}" in readme
    assert "`mcp_tool/server.py`" in readme and "`mcp_tool/mcp.json`" in readme
    entry = json.loads((EXAMPLES / "mcp_tool" / "mcp.json").read_text("utf-8"))
    assert entry["mcpServers"]["text"]["args"] == ["examples/mcp_tool/server.py"]


@pytest.mark.parametrize("script", ["lsp_client.py", "acp_client.py"])
def test_a_client_drives_a_turn_and_answers_its_approval(script: str, workspace: Path,
                                                         home: Path) -> None:
    out = run(script, workspace, home, WRITE)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (workspace / "notes.txt").read_text() == "hello from an example\n"
    lines = out.stdout.splitlines()
    assert "[tool] Write notes.txt" in lines
    assert any(ln.startswith("[approval] Write notes.txt: ") for ln in lines), out.stdout
    assert "Done: Created notes.txt" in out.stdout
    assert lines[-1].startswith(("[turn done] session ", "[stop end_turn] session "))


@pytest.mark.parametrize("script", ["lsp_client.py", "acp_client.py"])
def test_a_denied_approval_writes_nothing(script: str, workspace: Path, home: Path) -> None:
    out = run(script, workspace, home, "--deny", WRITE)
    assert out.returncode == 0, out.stderr[-3000:]  # the turn ends normally, the call refused
    assert not (workspace / "notes.txt").exists()
    assert "[tool failed]" in out.stdout, out.stdout
    [approval] = [ln for ln in out.stdout.splitlines() if ln.startswith("[approval] ")]
    assert approval.endswith((": reject_once", ": Reject")), approval


def test_the_json_stream_is_consumed(workspace: Path, home: Path) -> None:
    out = run("chat_json.py", workspace, home, "--permission-mode", "accept-edits", WRITE)
    assert out.returncode == 0, out.stderr[-3000:]
    assert (workspace / "notes.txt").read_text() == "hello from an example\n"
    lines = out.stdout.splitlines()
    assert lines[0] == ("tool write_file (Write notes.txt): completed: Created notes.txt "
                        "(22 bytes)")
    assert lines[1].startswith("reply (") and "Done: Created notes.txt" in lines[1]
    assert lines[2].startswith("status: done, session s") and lines[2].endswith("exit code 0")

    refused = run("chat_json.py", workspace, home, "write other.txt\nx")
    assert refused.returncode == 3  # no terminal to approve on: refused, said so
    assert "tool write_file (Write other.txt): failed: " in refused.stdout
    assert not (workspace / "other.txt").exists()


def test_a_custom_tool_from_an_mcp_server_is_called_in_a_turn(workspace: Path, home: Path,
                                                              tmp_path: Path) -> None:
    """mcp_tool/server.py named in .mcp.json: the user allows the server, the model calls
    ``mcp__text__word_count`` (a scripted model: the offline one calls no MCP tool)."""
    entry = {"command": sys.executable, "args": [str(EXAMPLES / "mcp_tool" / "server.py")]}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"text": entry}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "mcp__text__word_count",
                         "arguments": {"text": "one two three\nfour"}}]},
        {"text": "Counted."}]))
    out = run("lsp_client.py", workspace, home, "count the words", model=f"scripted:{script}")
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert any(ln.startswith("[approval] Start MCP server 'text' from .mcp.json")
               for ln in lines), out.stdout
    assert "[tool completed] 4 words, 2 lines, 18 characters" in lines, out.stdout
