"""The navigation tools in a real Neovim, answered by a real language server (pylsp)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.editors.nvim import runner
from tests.tooling import require

pytestmark = [pytest.mark.usefixtures("require_nvim"), pytest.mark.timeout(180)]

LIB = "def greet(name):\n    return 'hi ' + name\n\nVERSION = 2\n"
APP = "from lib import greet\n\n\nprint(greet('x'))\n"


def test_definition_references_and_symbol_attachments(env: dict[str, Path]) -> None:
    require(shutil.which("pylsp", path=str(Path(runner.nvim_binary() or "").parent)),
            "pylsp is not installed (the test extras)")
    ws = env["ws"]
    (ws / "lib.py").write_text(LIB, "utf-8")
    (ws / "app.py").write_text(APP, "utf-8")
    (ws / "notes.py").write_text("x = 1\n", "utf-8")
    log = env["tmp"] / "model.jsonl"
    out = runner.run_scripted(env, "navigate", [
        {"tool_calls": [{"name": "lsp_definition",
                         "arguments": {"path": "app.py", "line": 4, "symbol": "greet"}}]},
        {"tool_calls": [{"name": "lsp_references",
                         "arguments": {"path": "lib.py", "line": 1, "symbol": "greet"}}]},
        {"tool_calls": [{"name": "lsp_definition",
                         "arguments": {"path": "app.py", "line": 4, "symbol": "nope"}}]},
        {"text": "Found."}, {"text": "Explained."}],
        extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    calls = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    offered = set(calls[0]["tools"])
    assert {"lsp_definition", "lsp_references", "lsp_hover", "lsp_document_symbols",
            "lsp_workspace_symbols"} <= offered
    results = [str(m.get("content")) for m in calls[-2]["messages"] if m.get("role") == "tool"]
    definition, references, missing = results
    assert definition == "lib.py:1:5: def greet(name):", definition
    assert references.splitlines() == [
        "app.py:1:17: from lib import greet", "app.py:4:7: print(greet('x'))",
        "lib.py:1:5: def greet(name):"], references
    assert "'nope' is not on line 4 of app.py" in missing
    # symbol attachments: the one under the cursor (its whole function), one picked
    under = out["under_cursor"]
    assert under["kind"] == "symbol" and under["name"] == "greet"
    assert under["range"]["start"]["line"] == 0 and under["range"]["end"]["line"] == 2
    assert under["text"] == "def greet(name):\n    return 'hi ' + name\n"
    assert any(i.startswith("VERSION · ") and i.endswith("lib.py:4") for i in out["symbol_items"])
    assert out["picked"]["name"] == "VERSION" and out["picked"]["text"] == "VERSION = 2\n"
    assert out["pending"] == ["[symbol greet lib.py:1-2]", "[symbol VERSION lib.py:4]"]
    sent = str(calls[-1]["messages"][-1]["content"])
    assert 'name="greet"' in sent and "return 'hi ' + name" in sent
    assert 'name="VERSION"' in sent and "VERSION = 2" in sent
