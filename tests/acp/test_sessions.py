"""Session lifecycle over ACP with the SDK's client: stored with the first message, resume,
fork (our branches), close, delete, list paging and ``cwd``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from acp import RequestError, text_block
from openprogram_lsp.dispatcher import Dispatcher
from tests.acp.client import RecordingClient, in_process, initialize, until


async def test_initialize_advertises_every_session_method(dispatcher: Any) -> None:
    client = RecordingClient()
    async with in_process(dispatcher, client) as (conn, _agent):
        resp = await initialize(conn, client)
    caps = resp.agent_capabilities.session_capabilities
    assert all(getattr(caps, name) is not None
               for name in ("list", "resume", "fork", "close", "delete"))


async def test_a_session_is_stored_only_once_it_holds_a_message(
        acp: Any, dispatcher: Dispatcher, workspace: Path) -> None:
    store = dispatcher.services.store
    empty = await acp.new_session(cwd=str(workspace))
    used = await acp.new_session(cwd=str(workspace))
    assert not store.exists(empty.session_id)
    assert (await acp.list_sessions()).sessions == []
    # a slash command is no message; /mode works on it, the others say there is nothing yet
    await acp.prompt(session_id=empty.session_id, prompt=[text_block("/mode plan")])
    await acp.prompt(session_id=empty.session_id, prompt=[text_block("/branches")])
    assert not store.exists(empty.session_id)
    await acp.prompt(session_id=used.session_id, prompt=[text_block("list .")])
    assert store.exists(used.session_id)
    listed = await acp.list_sessions()
    assert [s.session_id for s in listed.sessions] == [used.session_id]
    assert store.meta(used.session_id)["workspace"] == str(workspace.resolve())


async def test_list_pages_with_an_opaque_cursor_and_filters_by_cwd(
        acp: Any, dispatcher: Dispatcher, workspace: Path, tmp_path: Path) -> None:
    store = dispatcher.services.store
    other = tmp_path / "other"
    other.mkdir()
    for i in range(53):  # stored sessions with a message, as any front end makes them
        ws = workspace if i % 2 else other
        sid = store.create_session(workspace=str(ws.resolve()), title=f"t{i}")
        from openprogram_lsp.core.types import Node

        store.append(sid, Node(id=f"u{i}", role="user", text="hi"), advance_head=True)
    first = await acp.list_sessions()
    assert len(first.sessions) == 50 and first.next_cursor
    rest = await acp.list_sessions(cursor=first.next_cursor)
    assert len(rest.sessions) == 3 and rest.next_cursor is None
    assert not {s.session_id for s in first.sessions} & {s.session_id for s in rest.sessions}
    mine = await acp.list_sessions(cwd=str(workspace))
    assert len(mine.sessions) == 26 and mine.next_cursor is None
    assert {s.cwd for s in mine.sessions} == {str(workspace.resolve())}
    for bad in ("zz", "-1", "9" * 20):
        with pytest.raises(RequestError) as err:
            await acp.list_sessions(cursor=bad)
        assert err.value.code == -32602
    for bad in ("relative", "/a\x00b"):
        with pytest.raises(RequestError) as err:
            await acp.list_sessions(cwd=bad)
        assert err.value.code == -32602 and "cwd" in str(err.value.data)
    assert (await acp.list_sessions(cwd=str(tmp_path / "gone"))).sessions == []


async def test_resume_continues_without_replay_in_another_connection(
        dispatcher: Dispatcher, workspace: Path) -> None:
    first = RecordingClient()
    async with in_process(dispatcher, first) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("list .")])
    second = RecordingClient()
    async with in_process(dispatcher, second) as (conn, _agent):
        resumed = await conn.resume_session(cwd=str(workspace), session_id=session.session_id)
        assert resumed.modes.current_mode_id == "ask"
        assert [o.id for o in resumed.config_options] == ["model", "mode"]
        await asyncio.sleep(0)
        assert not second.updates("user_message_chunk")  # no replay
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write r.txt\nr\n")])
        with pytest.raises(RequestError) as err:
            await conn.resume_session(cwd=str(workspace), session_id="s-none")
        assert err.value.code == -32002
    texts = [n.text for n in dispatcher.services.store.get_branch(session.session_id)
             if n.role == "user"]
    assert texts == ["list .", "write r.txt\nr\n"]


async def test_fork_is_a_named_branch_of_the_same_session(
        acp: Any, client: RecordingClient, dispatcher: Dispatcher, workspace: Path) -> None:
    store = dispatcher.services.store
    session = await acp.new_session(cwd=str(workspace))
    sid = session.session_id
    await acp.prompt(session_id=sid, prompt=[text_block("write a.txt\none\n")])
    first_reply = store.head(sid)
    await acp.prompt(session_id=sid, prompt=[text_block("write a.txt\ntwo\n")])
    # from the current head: the fork holds the whole conversation so far
    tail = await acp.fork_session(cwd=str(workspace), session_id=sid)
    assert tail.session_id.startswith(f"{sid}~")
    assert tail.field_meta["openprogram"]["branch"] == "fork-1"
    # from any message, named
    alt = await acp.fork_session(cwd=str(workspace), session_id=sid,
                                 openprogram={"fromNodeId": first_reply, "name": "alt"})
    assert alt.field_meta["openprogram"] == {"sessionId": sid, "branch": "alt",
                                             "fromNodeId": first_reply}
    resp = await acp.prompt(session_id=alt.session_id,
                            prompt=[text_block("write b.txt\nfrom alt\n")])
    assert resp.stop_reason == "end_turn"
    # the fork's events name the fork's ACP session, the one the client prompted
    await until(lambda: any(e["sessionId"] == alt.session_id
                            for e in client.ext_events("checkpoint.created")),
                "the fork's checkpoint event", timeout=30)
    alt_chain = [n.text for n in store.get_branch(sid, store.find_branch(sid, "alt"))
                 if n.role == "user"]
    assert alt_chain == ["write a.txt\none\n", "write b.txt\nfrom alt\n"]
    assert store.head(sid) == store.find_branch(sid, "alt")  # the fork is the active branch
    # its next prompt continues its own branch even after the main line moved on
    await acp.prompt(session_id=tail.session_id, prompt=[text_block("list .")])
    await acp.prompt(session_id=alt.session_id, prompt=[text_block("write c.txt\nc\n")])
    alt_chain = [n.text for n in store.get_branch(sid, store.find_branch(sid, "alt"))
                 if n.role == "user"]
    assert alt_chain[-1] == "write c.txt\nc\n" and len(alt_chain) == 3
    tail_chain = [n.text for n in store.get_branch(sid, store.find_branch(sid, "fork-1"))
                  if n.role == "user"]
    assert tail_chain == ["write a.txt\none\n", "write a.txt\ntwo\n", "list ."]
    names = {r.name for r in store.list_branches(sid)}
    assert {"alt", "fork-1"} <= names
    # listed beside their session (forks with a message), the same branch for any client
    unstarted = await acp.fork_session(cwd=str(workspace), session_id=sid)
    listed = [(s.session_id, s.title) for s in (await acp.list_sessions()).sessions]
    assert listed[0] == (sid, "write a.txt")
    assert set(listed[1:]) == {(tail.session_id, "write a.txt (fork-1)"),
                               (alt.session_id, "write a.txt (alt)")}
    assert unstarted.session_id not in dict(listed)
    # bad anchors and names are refused, naming the field
    for meta, field in (({"fromNodeId": "nope"}, "fromNodeId"), ({"name": "alt"}, "name"),
                        ({"name": ""}, "name"), ({"rules": "all"}, "rules")):
        with pytest.raises(RequestError) as err:
            await acp.fork_session(cwd=str(workspace), session_id=sid, openprogram=meta)
        assert err.value.code == -32602 and field in str(err.value)


async def test_a_fork_is_the_same_branch_in_another_connection(
        dispatcher: Dispatcher, workspace: Path) -> None:
    first = RecordingClient()
    async with in_process(dispatcher, first) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("list .")])
        fork = await conn.fork_session(cwd=str(workspace), session_id=session.session_id,
                                       openprogram={"name": "try"})
        await conn.prompt(session_id=fork.session_id, prompt=[text_block("write t.txt\nt\n")])
    second = RecordingClient()
    async with in_process(dispatcher, second) as (conn, _agent):
        await conn.load_session(cwd=str(workspace), session_id=fork.session_id)
        await conn.prompt(session_id=fork.session_id, prompt=[text_block("list .")])
    replayed = [u.content.text for u in second.updates("user_message_chunk")]
    assert replayed == ["list .", "write t.txt\nt\n"]
    store = dispatcher.services.store
    chain = [n.text for n in store.get_branch(session.session_id,
                                              store.find_branch(session.session_id, "try"))
             if n.role == "user"]
    assert chain == ["list .", "write t.txt\nt\n", "list ."]


async def test_fork_with_restore_code_brings_back_that_message_s_files(
        acp: Any, dispatcher: Dispatcher, workspace: Path) -> None:
    store = dispatcher.services.store
    session = await acp.new_session(cwd=str(workspace))
    sid = session.session_id
    await acp.prompt(session_id=sid, prompt=[text_block("write a.txt\none\n")])
    after_one = store.head(sid)
    await acp.prompt(session_id=sid, prompt=[text_block("write a.txt\ntwo\n")])
    assert (workspace / "a.txt").read_text() == "two\n"
    fork = await acp.fork_session(cwd=str(workspace), session_id=sid,
                                  openprogram={"fromNodeId": after_one, "restoreCode": True})
    restore = fork.field_meta["openprogram"]["codeRestore"]
    assert restore["restored"] == ["a.txt"] and restore["safetyCheckpointId"]
    assert (workspace / "a.txt").read_text() == "one\n"


async def test_close_forgets_the_session_here_and_delete_removes_it(
        acp: Any, dispatcher: Dispatcher, workspace: Path) -> None:
    store = dispatcher.services.store
    session = await acp.new_session(cwd=str(workspace))
    sid = session.session_id
    await acp.prompt(session_id=sid, prompt=[text_block("list .")])
    fork = await acp.fork_session(cwd=str(workspace), session_id=sid)
    await acp.close_session(session_id=sid)
    assert store.exists(sid)  # closed, not deleted: it can be resumed
    await acp.resume_session(cwd=str(workspace), session_id=sid)
    raw = acp._conn  # SDK 0.12's client has no typed session/delete
    await raw.send_request("session/delete", {"sessionId": fork.session_id})
    assert "acpForks" in store.meta(sid) and not store.meta(sid)["acpForks"]
    await raw.send_request("session/delete", {"sessionId": sid})
    assert not store.exists(sid)
    with pytest.raises(RequestError) as err:
        await raw.send_request("session/delete", {"sessionId": sid})
    assert err.value.code == -32002
    with pytest.raises(RequestError) as err:
        await acp.close_session(session_id="s-unknown")
    assert err.value.code == -32002
    # an empty session: delete simply forgets it
    empty = await acp.new_session(cwd=str(workspace))
    await raw.send_request("session/delete", {"sessionId": empty.session_id})
    with pytest.raises(RequestError):
        await acp.prompt(session_id=empty.session_id, prompt=[text_block("list .")])


async def test_hostile_ids_and_anchors_are_refused_and_the_agent_keeps_serving(
        acp: Any, dispatcher: Dispatcher, workspace: Path) -> None:
    session = await acp.new_session(cwd=str(workspace))
    sid = session.session_id
    await acp.prompt(session_id=sid, prompt=[text_block("list .")])
    raw = acp._conn
    for method, params in (
            ("session/load", {"cwd": str(workspace), "sessionId": f"{sid}~../../etc"}),
            ("session/resume", {"cwd": str(workspace), "sessionId": f"{sid}~"}),
            ("session/fork", {"cwd": str(workspace), "sessionId": "../" + sid}),
            ("session/delete", {"sessionId": "a/b"}),
            ("session/close", {"sessionId": "x" * 300}),
            ("session/set_model", {"sessionId": sid, "modelId": "scripted:/etc/passwd"}),
            ("session/set_config_option", {"sessionId": sid, "configId": "model",
                                           "type": "boolean", "value": True})):
        with pytest.raises(RequestError) as err:
            await raw.send_request(method, params)
        assert err.value.code == -32602, (method, err.value)
    for key in (f"{sid}~fnope", ):  # well-formed, but no such fork
        with pytest.raises(RequestError) as err:
            await acp.resume_session(cwd=str(workspace), session_id=key)
        assert err.value.code == -32002
    store = dispatcher.services.store
    tool = next(n for n in store.nodes(sid) if n.role == "tool")  # not a conversation message
    with pytest.raises(RequestError) as err:
        await acp.fork_session(cwd=str(workspace), session_id=sid,
                               openprogram={"fromNodeId": tool.id})
    assert err.value.code == -32602
    resp = await acp.prompt(session_id=sid, prompt=[text_block("list .")])
    assert resp.stop_reason == "end_turn"


async def test_a_fork_s_rules_scope_follows_openprogram_fork(
        dispatcher: Dispatcher, workspace: Path) -> None:
    """``rules``: ``inherit`` keeps the session's "always" answers, ``reset`` asks again."""
    client = RecordingClient(answer="allow_always")
    async with in_process(dispatcher, client) as (conn, _agent):
        session = await conn.new_session(cwd=str(workspace))
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=[text_block("write a.txt\n1\n")])
        head = dispatcher.services.store.head(sid)
        asked = len([n for n, _ in client.log if n == "permission"])
        for rules, asks in (("inherit", 0), ("reset", 1)):
            fork = await conn.fork_session(cwd=str(workspace), session_id=sid, openprogram={
                "fromNodeId": head, "rules": rules, "name": rules})
            await conn.prompt(session_id=fork.session_id,
                              prompt=[text_block(f"write a.txt\n{rules}\n")])
            now = len([n for n, _ in client.log if n == "permission"])
            assert (now - asked, (workspace / "a.txt").read_text()) == (asks, f"{rules}\n")
            asked = now
