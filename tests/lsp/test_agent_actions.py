"""The agent as code actions, from a plain LSP client (no openprogram capabilities)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp.conftest import OpClient, Starter, write_script
from tests.lsp.docs_helpers import Editor, with_editor


def _plain(editors: list[Editor], asked: list[types.ShowMessageRequestParams]) -> Any:
    base = with_editor(editors, permission=None)

    def setup(client: OpClient) -> None:
        base(client)

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def _ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            asked.append(params)
            return next(a for a in params.actions or [] if a.title == "Allow once")

    return setup


async def test_fix_with_the_agent_from_a_plain_client(start: Starter, tmp_path: Path,
                                                      workspace: Path) -> None:
    src = workspace / "calc.py"
    src.write_text("def add(a, b):\n    return a - b\n", "utf-8")
    log = tmp_path / "model.jsonl"
    script = [{"text": "Fixing.", "tool_calls": [{"name": "edit_file", "arguments": {
        "path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}]},
        {"text": "add now adds."}]
    editors: list[Editor] = []
    asked: list[types.ShowMessageRequestParams] = []
    client = await start(model=write_script(tmp_path / "s.json", script), experimental=False,
                         progress=True, apply_edit=True, setup=_plain(editors, asked),
                         extra_env={"OPENPROGRAM_SCRIPTED_LOG": str(log)})
    uri = editors[0].open(src)
    diag = types.Diagnostic(range=types.Range(start=types.Position(1, 11),
                                              end=types.Position(1, 16)),
                            message="add subtracts", severity=types.DiagnosticSeverity.Warning,
                            source="lint")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(1, 11), end=types.Position(1, 11)),
        context=types.CodeActionContext(diagnostics=[diag])))
    assert actions is not None, "no actions"
    fix: Any = next(a for a in actions if a["title"] == "Fix with the agent")  # type: ignore[index]
    assert fix["kind"] == "quickfix"
    assert not any(a["title"].startswith("Ask")  # type: ignore[index]
                   for a in actions)  # no selection, nothing to ask about
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=fix["command"]["command"], arguments=fix["command"]["arguments"]))
    assert result["status"] == "done", result
    assert src.read_text("utf-8") == "def add(a, b):\n    return a + b\n"
    [approval] = asked  # the approval arrived as a plain showMessageRequest
    assert "calc.py" in approval.message
    # the model saw the lines of the diagnostic and the diagnostic itself
    user = json.loads(log.read_text("utf-8").splitlines()[0])["messages"][-1]
    assert '<selection path="calc.py" lines="2">\n    return a - b\n</selection>' \
        in user["content"]
    assert "calc.py:2:12: warning: add subtracts [lint]" in user["content"]
    # progress and the reply reached the plain client
    reports = [r for rs in client.progress_reports.values() for r in rs]
    assert any(isinstance(r, types.WorkDoneProgressBegin) for r in reports)
    assert any("add now adds." in m.message for m in client.messages)


async def test_ask_about_a_selection_and_bad_arguments(start: Starter, tmp_path: Path,
                                                       workspace: Path) -> None:
    src = workspace / "q.py"
    src.write_text("x = [i * i for i in range(3)]\n", "utf-8")
    editors: list[Editor] = []
    client = await start(model=write_script(tmp_path / "s.json", [{"text": "squares"}]),
                         setup=with_editor(editors))
    uri = editors[0].open(src)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(0, 4), end=types.Position(0, 29)),
        context=types.CodeActionContext(diagnostics=[])))
    assert actions is not None
    assert len(actions) == 1
    ask: Any = actions[0]
    assert ask["title"] == "Ask the agent about this selection"
    command = ask["command"]["command"]
    args = dict(ask["command"]["arguments"][0])
    args["prompt"] = "what is x?"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command, arguments=[args]))
    history = await client.call("openprogram/history", {"sessionId": result["sessionId"]})
    user = history["nodes"][0]
    assert user["text"] == "what is x?"
    assert user["context"][0]["text"] == "[i * i for i in range(3)]"
    for bad, field in (([], "arguments"), ([{"uri": uri}], "arguments[0].range")):
        try:
            await client.workspace_execute_command_async(types.ExecuteCommandParams(
                command=command, arguments=bad))
        except Exception as exc:
            assert field in str(exc)
        else:
            raise AssertionError("bad arguments were accepted")
