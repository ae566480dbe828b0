"""A whole ACP life against loopback model servers: ``openprogram-lsp acp`` processes driven by
the SDK's client see thoughts and a plan, fork, resume the fork in a new process, switch the
model and its reasoning effort, and get ``max_tokens`` and ``refusal`` stop reasons."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp import text_block
from openprogram_lsp.store.session_store import SessionStore
from tests.acp.client import RecordingClient, subprocess_agent
from tests.acp.test_mcp import assert_calls_announced_and_closed
from tests.providers.loopback import LoopbackServer, Reply
from tests.providers.wire import Call, OpenAIStream

STREAMS = Path(__file__).parents[1] / "providers" / "streams"
KEY = "sk-loopback-test"
TODOS = {"todos": [{"content": "Read setup.cfg", "status": "completed"},
                   {"content": "Answer", "status": "in_progress", "activeForm": "Answering"}]}


def recorded(name: str) -> Reply:
    data = (STREAMS / name).read_bytes()
    return Reply(chunks=[p + b"\n\n" for p in data.split(b"\n\n") if p])


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    srv = LoopbackServer().start()
    try:
        yield srv
    finally:
        srv.stop()


def _option(options: list[Any], config_id: str) -> Any:
    return next((o for o in options if o.id == config_id), None)


async def _prompt(conn: Any, sid: str, text: str) -> Any:
    return await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(text)]), 120)


async def test_thoughts_plan_fork_resume_model_and_stop_reasons(
        server: LoopbackServer, home: Path, workspace: Path) -> None:
    (workspace / "setup.cfg").write_text("[metadata]\nname = demo\n")
    env = {"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": KEY,
           "OPENPROGRAM_MODEL": "openai:deepseek-v4-pro",
           "OPENPROGRAM_MODEL_MENU": "openai:gpt-5-mini"}
    server.queue(
        recorded("deepseek_reasoning_tool_call.sse"),  # thinks, then reads setup.cfg
        Reply(chunks=OpenAIStream(model="deepseek-v4-pro", calls=[
            Call("call_plan", "todo_write", [json.dumps(TODOS)])]).events()),
        Reply(chunks=OpenAIStream(model="deepseek-v4-pro", text=["It is demo."]).events()),
        Reply(chunks=OpenAIStream(model="deepseek-v4-pro", text=["Forked."]).events()))
    first = RecordingClient()
    async with subprocess_agent(first, home, workspace, env=env) as (conn, _proc):
        session = await conn.new_session(cwd=str(workspace))
        sid = session.session_id
        assert _option(session.config_options, "effort") is not None  # a reasoning model
        resp = await _prompt(conn, sid, "name?")
        assert resp.stop_reason == "end_turn"
        fork = await conn.fork_session(cwd=str(workspace), session_id=sid,
                                       openprogram={"name": "second-try"})
        resp = await _prompt(conn, fork.session_id, "and again?")
        assert resp.stop_reason == "end_turn"
    thoughts = "".join(u.content.text for u in first.updates("agent_thought_chunk"))
    assert thoughts == "I should read the config first."
    assert "I should" not in first.text() and "It is demo." in first.text()
    assert_calls_announced_and_closed(first)
    usage = first.updates("usage_update")  # before each model call: the context's fill
    assert usage and all(0 < u.used < u.size for u in usage)
    plan = first.updates("plan")[-1]
    assert [(e.content, e.status) for e in plan.entries] == [("Read setup.cfg", "completed"),
                                                             ("Answer", "in_progress")]

    server.queue(
        Reply(chunks=OpenAIStream(model="gpt-5-mini", text=["cut"], finish="length").events()),
        recorded("openai_refusal.sse"))
    second = RecordingClient()  # another editor, later: resumes the fork
    async with subprocess_agent(second, home, workspace, env=env) as (conn, _proc):
        resumed = await conn.resume_session(cwd=str(workspace), session_id=fork.session_id)
        model = _option(resumed.config_options, "model")
        assert [o.value for o in model.options] == ["openai:deepseek-v4-pro",
                                                    "openai:gpt-5-mini", "offline"]
        offline = await conn.set_config_option(config_id="model", session_id=fork.session_id,
                                               value="offline")
        assert _option(offline.config_options, "effort") is None  # no effort to take
        await _prompt(conn, fork.session_id, "/effort")
        assert "/effort: offline takes no reasoning effort" in second.text()
        changed = await conn.set_config_option(config_id="model", session_id=fork.session_id,
                                               value="openai:gpt-5-mini")
        effort = _option(changed.config_options, "effort")
        assert effort is not None and effort.category == "thought_level"
        # /effort for clients that draw no thought_level menu; the option is the same setting
        await _prompt(conn, fork.session_id, "/effort medium")
        assert _option(second.updates("config_option_update")[-1].config_options,
                       "effort").current_value == "medium"
        await conn.set_config_option(config_id="effort", session_id=fork.session_id,
                                     value="high")
        await _prompt(conn, fork.session_id, "/effort")
        assert "The reasoning effort of openai:gpt-5-mini is high" in second.text()
        resp = await _prompt(conn, fork.session_id, "longer?")
        assert resp.stop_reason == "max_tokens"
        resp = await _prompt(conn, fork.session_id, "something bad")
        assert resp.stop_reason == "refusal"
        await conn.load_session(cwd=str(workspace), session_id=fork.session_id)
    replayed = "".join(u.content.text for u in second.updates("agent_thought_chunk"))
    assert replayed == "I should read the config first."  # stored with the reply, shown again
    sent = server.received[-2].json
    assert (sent["model"], sent["reasoning_effort"]) == ("gpt-5-mini", "high")
    # the fork is one named branch of the one stored session, with every turn on it
    store = SessionStore(home)
    tip = store.find_branch(sid, "second-try")
    assert tip is not None
    users = [n.text for n in store.get_branch(sid, tip) if n.role == "user"]
    assert users == ["name?", "and again?", "longer?", "something bad"]
    assert [s["id"] for s in store.list_sessions() if s.get("headId")] == [sid]
    assert store.meta(sid)["settings"] == {"mode": "ask", "model": "openai:gpt-5-mini",
                                           "effort": "high"}
