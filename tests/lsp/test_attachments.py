"""Context attachments through the real transport: what the model saw, and what history shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openprogram_lsp.core.transcript import without_environment
from tests.lsp.conftest import Starter, write_script
from tests.lsp.docs_helpers import Editor, with_editor


def _model_inputs(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _rng(a: int, b: int, c: int, d: int) -> dict[str, Any]:
    return {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}


async def test_selection_reaches_the_model_and_history(start: Starter, tmp_path: Path,
                                                       workspace: Path) -> None:
    src = workspace / "app.py"
    src.write_text("import os\n\ndef main():\n    print(x)\n    return 0\n", "utf-8")
    log = tmp_path / "model.jsonl"
    editors: list[Editor] = []
    client = await start(model=write_script(tmp_path / "s.json", [{"text": "seen"}] * 2),
                         extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)},
                         setup=with_editor(editors))
    uri = editors[0].open(src)
    editors[0].edit(uri, (4, 11), (4, 12), "1")  # unsaved: return 1
    diag = {"range": _rng(3, 10, 3, 11), "message": "undefined name 'x'", "severity": 1,
            "source": "pyflakes"}
    result = await client.call("openprogram/chat", {
        "text": "why does this fail?",
        "context": [{"kind": "selection", "uri": uri, "range": _rng(2, 0, 5, 0)},
                    {"kind": "diagnostics", "uri": uri, "range": _rng(3, 0, 4, 0),
                     "diagnostics": [diag]},
                    {"kind": "references", "uri": uri, "range": _rng(2, 4, 2, 8),
                     "name": "main", "text": "app.py:3: def main():\nrun.py:1: main()"}]})
    assert result["status"] == "done"
    user = _model_inputs(log)[0]["messages"][-1]
    assert user["role"] == "user"
    content = user["content"]
    assert without_environment(content).endswith("\n\nwhy does this fail?")  # note after it
    assert ('<selection path="app.py" lines="3-5" unsaved="true">\n'
            "def main():\n    print(x)\n    return 1\n</selection>") in content
    assert "app.py:4:11: error: undefined name 'x' [pyflakes]" in content
    assert ('<references path="app.py" lines="3" name="main">\n'
            "app.py:3: def main():\nrun.py:1: main()\n</references>") in content
    history = await client.call("openprogram/history", {"sessionId": result["sessionId"]})
    node = next(n for n in history["nodes"] if n["id"] == result["userNodeId"])
    assert node["text"] == "why does this fail?"
    assert node["context"][0]["text"] == "def main():\n    print(x)\n    return 1\n"
    assert node["context"][0]["unsaved"] is True
    assert node["context"][1]["diagnostics"][0]["message"] == "undefined name 'x'"
    # the next turn still shows the earlier attachment, rendered the same way
    await client.call("openprogram/chat", {"text": "and now?",
                                           "sessionId": result["sessionId"]})
    second = _model_inputs(log)[1]["messages"]
    assert second[0]["content"] == content


async def test_attachment_errors_name_the_field(start: Starter, tmp_path: Path,
                                                workspace: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("no\n", "utf-8")
    client = await start()
    cases = [
        ({"kind": "file", "uri": outside.as_uri()}, "context[0].uri: outside the workspace"),
        ({"kind": "diagnostics", "uri": (workspace / "a").as_uri()}, "context[0]: a diagnostics"),
        ({"kind": "references", "uri": (workspace / "a").as_uri(), "name": "f"},
         "context[0].text: a references attachment needs the list as text"),
        ({"kind": "nope", "uri": "file:///x"}, "context.0.kind"),
        ({"kind": "file", "uri": (workspace / "missing.py").as_uri()}, "no such file"),
    ]
    for item, expected in cases:
        try:
            await client.call("openprogram/chat", {"text": "x", "context": [item]})
        except Exception as exc:
            assert expected in str(exc), (item, str(exc))
        else:
            raise AssertionError(f"{item} was accepted")
    sessions = await client.call("openprogram/sessions", {})
    assert sessions["sessions"] == []  # nothing was started by a refused request


async def test_fork_takes_context_and_file_text_is_given(start: Starter, tmp_path: Path,
                                                         workspace: Path) -> None:
    log = tmp_path / "model.jsonl"
    client = await start(model=write_script(tmp_path / "s.json", [{"text": "a"}, {"text": "b"}]),
                         extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    first = await client.call("openprogram/chat", {"text": "hi"})
    await client.call("openprogram/fork", {
        "sessionId": first["sessionId"], "fromNodeId": None, "text": "look at this",
        "context": [{"kind": "symbol", "uri": "untitled:Untitled-1", "name": "Thing",
                     "text": "class Thing: ...", "range": _rng(0, 0, 0, 16)}]})
    content = _model_inputs(log)[1]["messages"][-1]["content"]
    assert content.startswith('<context>\n<symbol path="untitled:Untitled-1" lines="1" '
                              'name="Thing">\nclass Thing: ...\n</symbol>\n</context>')
