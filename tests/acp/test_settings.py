"""Model and mode as ACP config options: chosen by one client, run by the next prompt, shown
to every other client of the session (in this process and in another)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from acp import RequestError, text_block
from openprogram_lsp.dispatcher import Dispatcher
from tests.acp.client import RecordingClient, in_process, subprocess_agent, until


def _option(options: list[Any], config_id: str) -> Any:
    return next(o for o in options if o.id == config_id)


async def test_new_session_offers_model_and_mode_and_refuses_what_is_not_offered(
        acp: Any, dispatcher: Dispatcher, workspace: Path) -> None:
    session = await acp.new_session(cwd=str(workspace))
    model = _option(session.config_options, "model")
    assert model.category == "model" and model.current_value == "offline"
    assert [o.value for o in model.options] == ["offline"]
    mode = _option(session.config_options, "mode")
    assert mode.category == "mode" and mode.current_value == "ask"
    assert [o.value for o in mode.options] == ["ask", "accept-edits", "plan", "bypass"]
    sid = session.session_id
    for config_id, value in (("model", "scripted:/etc/passwd"), ("model", "openai:gpt-4o"),
                             ("mode", "yolo"), ("colour", "red"), ("model", "x" * 100_000),
                             ("y" * 100_000, "red")):
        with pytest.raises(RequestError) as err:
            await acp.set_config_option(config_id=config_id, session_id=sid, value=value)
        assert err.value.code == -32602 and len(str(err.value.data)) < 1000
    changed = await acp.set_config_option(config_id="mode", session_id=sid, value="plan")
    assert _option(changed.config_options, "mode").current_value == "plan"
    await acp.prompt(session_id=sid, prompt=[text_block("write a.txt\nx\n")])
    assert not (workspace / "a.txt").exists()  # plan mode refused the edit
    assert dispatcher.services.store.meta(sid)["settings"] == {"mode": "plan"}


async def test_a_chosen_model_runs_from_the_next_prompt_and_set_model_is_the_same(
        home: Path, workspace: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text(json.dumps([{"text": "from model one"}]))
    two.write_text(json.dumps([{"text": "from model two"}]))
    client = RecordingClient()
    env = {"OPENPROGRAM_MODEL_MENU": f"scripted:{one},scripted:{two}"}
    async with subprocess_agent(client, home, workspace, env=env) as (conn, _proc):
        session = await conn.new_session(cwd=str(workspace))
        sid = session.session_id
        values = [o.value for o in _option(session.config_options, "model").options]
        assert values == ["offline", f"scripted:{one}", f"scripted:{two}"]
        assert _option(session.config_options, "model").current_value == "offline"
        # the older `models` field (agent-shell's only model list) offers the same models
        raw = await conn._conn.send_request("session/resume", {"cwd": str(workspace),
                                                               "sessionId": sid})
        assert raw["models"]["currentModelId"] == "offline"
        assert [m["modelId"] for m in raw["models"]["availableModels"]] == values
        await conn.set_config_option(config_id="model", session_id=sid,
                                     value=f"scripted:{one}")
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hi")]), 120)
        assert "from model one" in client.text()
        await conn._conn.send_request("session/set_model",
                                      {"sessionId": sid, "modelId": f"scripted:{two}"})
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hi")]), 120)
        assert "from model two" in client.text()
        raw = await conn._conn.send_request("session/load", {"cwd": str(workspace),
                                                             "sessionId": sid,
                                                             "mcpServers": []})
        assert raw["models"]["currentModelId"] == f"scripted:{two}"
        with pytest.raises(RequestError) as err:
            await conn._conn.send_request("session/set_model",
                                          {"sessionId": sid, "modelId": "openai:nope"})
        assert err.value.code == -32602
    updates = client.updates("config_option_update")
    assert _option(updates[-1].config_options, "model").current_value == f"scripted:{two}"


async def test_a_change_reaches_the_other_clients_of_the_session(
        dispatcher: Dispatcher, home: Path, workspace: Path) -> None:
    here = RecordingClient()
    async with in_process(dispatcher, here) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=[text_block("list .")])
        there = RecordingClient()  # another editor: its own agent process, the same home
        async with subprocess_agent(there, home, workspace) as (other, _proc):
            await other.resume_session(cwd=str(workspace), session_id=sid)
            await conn.set_session_mode(session_id=sid, mode_id="accept-edits")
            # two notifications, current_mode_update then config_option_update: wait for both
            await until(lambda: bool(there.updates("current_mode_update"))
                        and bool(there.updates("config_option_update")), "the mode change",
                        timeout=60)
            assert there.updates("current_mode_update")[-1].current_mode_id == "accept-edits"
            shown = there.updates("config_option_update")[-1].config_options
            assert _option(shown, "mode").current_value == "accept-edits"
            # and back: the other process's change reaches this connection
            await other.set_config_option(config_id="mode", session_id=sid, value="plan")
            await until(lambda: any(u.current_mode_id == "plan"
                                    for u in here.updates("current_mode_update")),
                        "the mode change from the other process", timeout=60)
            await conn.prompt(session_id=sid, prompt=[text_block("write p.txt\np\n")])
    assert not (workspace / "p.txt").exists()  # the next prompt ran in the other's plan mode


async def test_the_model_slash_command_lists_and_switches_for_clients_without_a_menu(
        acp: Any, client: RecordingClient, dispatcher: Dispatcher, workspace: Path) -> None:
    session = await acp.new_session(cwd=str(workspace))
    sid = session.session_id
    await acp.prompt(session_id=sid, prompt=[text_block("/model")])
    assert "* 1. offline" in client.text()
    await acp.prompt(session_id=sid, prompt=[text_block("/model scripted:/etc/passwd")])
    assert "is not one of offline" in client.text()
    await acp.prompt(session_id=sid, prompt=[text_block("/model 1")])
    assert "Model set to offline" in client.text()
    assert not dispatcher.services.store.exists(sid)  # slash commands store nothing
    await acp.prompt(session_id=sid, prompt=[text_block("list .")])
    assert dispatcher.services.store.meta(sid)["settings"] == {"mode": "ask",
                                                               "model": "offline"}
