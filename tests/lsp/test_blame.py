"""Agent blame over stdio for a plain pytest-lsp client: three turns on two branches, switches
between them, a user edit outside the agent, code lenses, hovers, and a one-hunk restore."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as t

from tests.lsp.conftest import OpClient, Starter

BASE = "a1\na2\na3\na4\na5\n"
MAIN2 = "a1\nB2\na3\na4\na5\n"
ALT = "a1\na2\na3\na4\nC5\n"


async def _write(client: OpClient, text: str, **params: Any) -> dict[str, Any]:
    body = {"text": f"write f.py\n{text}", **params}
    method = "openprogram/fork" if "fromNodeId" in params else "openprogram/chat"
    result: dict[str, Any] = await client.call(method, body)
    assert result["status"] == "done", result
    return result


async def _blame(client: OpClient, uri: str) -> list[dict[str, Any]]:
    out = await client.call("openprogram/blame", {"uri": uri})
    hunks: list[dict[str, Any]] = out["hunks"]
    return hunks


def _owner(hunks: list[dict[str, Any]], line: int) -> dict[str, Any]:
    return next(h for h in hunks if h["startLine"] <= line < h["startLine"] + h["lineCount"])


async def _lenses(client: OpClient, uri: str) -> list[tuple[int, str]]:
    lenses = await client.text_document_code_lens_async(
        t.CodeLensParams(text_document=t.TextDocumentIdentifier(uri=uri)))
    return [(lens.range.start.line, lens.command.title if lens.command else "")
            for lens in lenses or []]


async def _hover(client: OpClient, uri: str, line: int) -> str:
    hover = await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line, 0)))
    if hover is None:
        return ""
    contents = hover.contents
    assert isinstance(contents, t.MarkupContent)
    return contents.value


async def test_blame_follows_turns_branches_switches_and_user_edits(
        start: Starter, workspace: Path) -> None:
    client = await start(model="offline", args=["--permission-mode", "bypass"])
    f = workspace / "f.py"
    uri = f.as_uri()
    one = await _write(client, BASE)
    sid = one["sessionId"]
    two = await _write(client, MAIN2, sessionId=sid)
    await client.call("openprogram/nameBranch", {"sessionId": sid, "headId": two["headId"],
                                                 "name": "first"})
    alt = await _write(client, ALT, sessionId=sid, fromNodeId=one["assistantNodeId"],
                       name="retry", restoreCode=True)
    assert f.read_text() == ALT

    hunks = await _blame(client, uri)
    assert [_owner(hunks, n)["turnId"] for n in range(5)] == [one["assistantNodeId"]] * 4 + [
        alt["assistantNodeId"]]
    assert _owner(hunks, 4)["branch"] == "retry" and _owner(hunks, 4)["turn"] == 2
    assert _owner(hunks, 4)["approval"]["by"] == "bypass"
    assert _owner(hunks, 4)["toolCall"]["name"] == "write_file"
    lenses = await _lenses(client, uri)
    assert lenses == [(0, "edited by the agent in turn 1 · branch `retry` · ran in bypass"),
                      (4, "edited by the agent in turn 2 · branch `retry` · ran in bypass")]

    # switch to the first branch: line 2 is turn 2's again (through the restore), line 5 turn 1's
    await client.call("openprogram/checkout", {"sessionId": sid, "headId": two["headId"],
                                               "restoreCode": True})
    assert f.read_text() == MAIN2
    hunks = await _blame(client, uri)
    assert [_owner(hunks, n)["turnId"] for n in range(5)] == [
        one["assistantNodeId"], two["assistantNodeId"], one["assistantNodeId"],
        one["assistantNodeId"], one["assistantNodeId"]]
    assert _owner(hunks, 1)["branch"] == "first"
    assert "turn 2 · branch `first`" in await _hover(client, uri, 1)

    # a user edit outside the agent is the user's, not the agent's
    f.write_text("a1\nB2\na3\nUSER4\na5\n")
    hunks = await _blame(client, uri)
    assert _owner(hunks, 3)["kind"] == "unrecorded"
    assert "not by the agent" in await _hover(client, uri, 3)
    assert 3 not in [line for line, _ in await _lenses(client, uri)]
    await client.call("openprogram/chat", {"sessionId": sid, "text": "write g.txt\nother\n"})
    hunks = await _blame(client, uri)
    assert _owner(hunks, 3)["kind"] in ("user", "unrecorded")
    assert _owner(hunks, 1)["turnId"] == two["assistantNodeId"]

    # restore turn 2's hunk: B2 goes back, the user's line and the rest stay
    actions = await client.call("textDocument/codeAction", t.CodeActionParams(
        text_document=t.TextDocumentIdentifier(uri=uri),
        range=t.Range(t.Position(1, 0), t.Position(1, 0)),
        context=t.CodeActionContext(diagnostics=[])))
    assert [a["title"] for a in actions] == ["Restore this hunk to before the agent's edit"]
    command = actions[0]["command"]
    out = await client.workspace_execute_command_async(t.ExecuteCommandParams(
        command=command["command"], arguments=command["arguments"]))
    assert f.read_text() == "a1\na2\na3\nUSER4\na5\n"
    assert out["safetyCheckpointId"]
    undo = await client.call("openprogram/restore", {"checkpointId": out["safetyCheckpointId"],
                                                     "paths": ["f.py"]})
    assert undo["restored"] == ["f.py"] and f.read_text() == "a1\nB2\na3\nUSER4\na5\n"


async def test_blame_is_off_when_disabled_and_for_untouched_files(
        start: Starter, workspace: Path) -> None:
    (workspace / "mine.txt").write_text("mine\n")
    client = await start(model="offline", args=["--permission-mode", "bypass"],
                         init_options={"blame": {"enabled": False}})
    await client.call("openprogram/chat", {"text": "write f.py\nx\n"})
    assert await _blame(client, (workspace / "f.py").as_uri()) == []
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"openprogram": {"blame": {"enabled": True}}}))
    assert await _lenses(client, (workspace / "f.py").as_uri()) != []
    assert await _lenses(client, (workspace / "mine.txt").as_uri()) == []
    assert await _hover(client, (workspace / "mine.txt").as_uri(), 0) == ""
    outside = (workspace.parent / "outside.txt")
    outside.write_text("x\n")
    assert await _blame(client, outside.as_uri()) == []
