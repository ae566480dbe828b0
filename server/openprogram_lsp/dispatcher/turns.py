"""The turn lifecycle: session, history, user node first, loop, persist, finalize."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.agent.loop import LoopHooks, LoopState, stop_warning
from openprogram_lsp.agent.tool_exec import ToolRunner
from openprogram_lsp.approvals.rulebook import RuleBook, with_client_rules
from openprogram_lsp.context.budget import resolve_window
from openprogram_lsp.context.environment import environment_note, last_note
from openprogram_lsp.context.render import is_compact_command
from openprogram_lsp.core.chain import NodeChain
from openprogram_lsp.core.errors import (
    CheckpointError,
    HookBlocked,
    NotFound,
    OpenProgramError,
    SessionBusy,
    TurnCancelled,
)
from openprogram_lsp.core.ids import new_id
from openprogram_lsp.core.offload import inline_ok
from openprogram_lsp.core.ports import AgentRun, Checkpointer
from openprogram_lsp.core.turn_context import (
    current_agent_id,
    current_message_depth,
    current_session_id,
    current_turn_id,
)
from openprogram_lsp.core.turn_root import real_path, resolved
from openprogram_lsp.core.types import (
    Node,
    NodeStatus,
    ToolCall,
    ToolCallRecord,
    TurnError,
    TurnRequest,
    TurnResult,
)
from openprogram_lsp.dispatcher.active import ActiveTurn
from openprogram_lsp.dispatcher.collaboration import Collaboration, NoCollaboration
from openprogram_lsp.dispatcher.finalize import finalize_turn, first_line
from openprogram_lsp.dispatcher.history import RulesScopes, resolve_history
from openprogram_lsp.dispatcher.loop_runner import (
    BRIEF_TOOLS_BELOW,
    compact_command,
    prepare_context,
    run_loop,
)
from openprogram_lsp.dispatcher.services import Services
from openprogram_lsp.dispatcher.thread_loops import ThreadLoops
from openprogram_lsp.dispatcher.tool_sources import expand_user_message, turn_tools
from openprogram_lsp.dispatcher.turn_hooks import (
    PROMPT_SOURCES,
    admitted_tools,
    agent_definition,
    start_hooks,
    system_extra,
)
from openprogram_lsp.dispatcher.turn_settings import default_model, turn_settings, with_effort
from openprogram_lsp.events.bus import Event, make_event
from openprogram_lsp.store.owner import current_record, record_alive, record_is_self
from openprogram_lsp.store.reply_calls import ended_call
from openprogram_lsp.store.writer import SessionNodeWriter, current_writer
from openprogram_lsp.tools.base import ToolContext

log = logging.getLogger(__name__)
GUARD_TIMEOUT = 120.0


def _tool_node_id(turn_id: str, call_id: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)
    return f"{turn_id}_t_{safe}"[:120]


class Dispatcher:
    """Runs conversation turns against injected services."""

    def __init__(self, services: Services,
                 collaboration: Callable[[Dispatcher], Collaboration] | None = None) -> None:
        self.services = services
        self._lock = threading.Lock()
        self._active: dict[str, ActiveTurn] = {}  # turn id -> turn
        self._checkpointers: dict[str, Checkpointer | None] = {}  # by real path
        self._scopes = RulesScopes(forks=services.store.rules_forks)
        self.agents: Collaboration = (collaboration(self) if collaboration is not None
                                      else NoCollaboration())
        self._loops = ThreadLoops()

    # -- queries ------------------------------------------------------------------------------

    def active_turns(self, session_id: str | None = None) -> list[ActiveTurn]:
        """Turns in flight, optionally of one session."""
        with self._lock:
            return [t for t in self._active.values()
                    if session_id is None or t.session_id == session_id]

    def user_turn(self, session_id: str) -> ActiveTurn | None:
        """The running user-facing (head-advancing) turn of a session, if any."""
        return next((t for t in self.active_turns(session_id) if t.request.advance_head), None)

    def cancel(self, session_id: str) -> bool:
        """Cancel every running turn of a session; True if there was one."""
        turns = self.active_turns(session_id)
        for t in turns:
            t.control.request_cancel()
        jobs = self.agents.cancel_session(session_id)
        return bool(turns) or bool(jobs)

    def cancel_all(self) -> int:
        """Cancel every running turn (shutdown)."""
        turns = self.active_turns()
        for t in turns:
            t.control.request_cancel()
        self.agents.cancel_all()
        return len(turns)

    def steer(self, session_id: str, text: str) -> bool:
        """Interject into the session's running turn; False when none runs."""
        turn = self.user_turn(session_id) or next(iter(self.active_turns(session_id)), None)
        if turn is None:
            return False
        turn.control.steer(text)
        return True

    def list_agents(self, session_id: str | None = None) -> list[AgentRun]:
        """Subagent runs and deliveries of a session (of every session when None)."""
        return self.agents.list_agents(session_id)

    def checkpointer(self, workspace: Path) -> Checkpointer | None:
        """The checkpointer of a workspace (created once)."""
        factory = self.services.checkpointer_for
        if factory is None:
            return None
        real = real_path(workspace)
        with self._lock:
            if real not in self._checkpointers:
                self._checkpointers[real] = factory(Path(real))
            return self._checkpointers[real]

    # -- entry points -------------------------------------------------------------------------

    def process_user_turn(self, req: TurnRequest, *,
                          on_event: Callable[[Event], None] | None = None,
                          cancel_event: threading.Event | None = None,
                          on_session: Callable[[str], None] | None = None) -> TurnResult:
        """Run one turn synchronously on the calling thread's own event loop (for threads and
        the CLI): one loop per thread, kept from turn to turn (``ThreadLoops``)."""

        async def main() -> TurnResult:
            control = TurnControl()
            stop = threading.Event()
            watcher = None
            if cancel_event is not None:
                loop = asyncio.get_running_loop()
                control.bind_loop(loop)

                def watch() -> None:
                    while not stop.is_set():
                        if cancel_event.wait(0.05):
                            control.request_cancel()
                            return

                watcher = threading.Thread(target=watch, daemon=True)
                watcher.start()
            try:
                return await self.run_turn(req, control=control, on_event=on_event,
                                           on_session=on_session)
            finally:
                stop.set()
                if watcher is not None:
                    watcher.join(1)

        # Ctrl-C cancels the turn (it then ends as cancelled), a second one raises
        return self._loops.run(main(), cancel_on_sigint=True)

    async def run_turn(self, req: TurnRequest, *, control: TurnControl | None = None,
                       on_event: Callable[[Event], None] | None = None,
                       on_started: Callable[[ActiveTurn], None] | None = None,
                       on_session: Callable[[str], None] | None = None) -> TurnResult:
        """Run one turn on the current loop and return its result (never raises on turn errors).

        ``on_session`` learns the session id before the turn's first event.
        """
        s = self.services
        control = control or TurnControl()
        control.bind_loop(asyncio.get_running_loop())
        workspace = Path(req.workspace or s.workspace)

        # 1. session created or loaded
        if req.session_id:
            if not s.store.exists(req.session_id):
                raise NotFound(f"unknown session id {req.session_id!r}")
            sid = req.session_id
            meta_ws = s.store.meta(sid).get("workspace")
            if req.workspace is None and meta_ws:
                workspace = Path(meta_ws)
        else:
            # titled from the first message now, so a listing names it while it runs
            sid = s.store.create_session(workspace=str(workspace), title=first_line(req.text))
        if req.advance_head and req.source == "user" and self.user_turn(sid) is not None:
            raise SessionBusy(f"session {sid} is already running a turn; wait for it, "
                              "interject with openprogram/steer, or cancel it")

        unsubscribe = None
        if on_event is not None:
            handler = on_event
            unsubscribe = s.bus.subscribe(
                lambda ev: handler(ev) if ev.session_id == sid else None)
        try:
            # held for the whole turn: another process's turn here is refused, never forked;
            # the workspace's real path resolved once for all of the turn (core.turn_root)
            with resolved(workspace), s.store.hold_session(sid, f"turn in {workspace}"):
                if on_session is not None:
                    on_session(sid)
                return await self._run(sid, req, control, workspace, on_started)
        finally:
            if unsubscribe:
                unsubscribe()

    async def _run(self, sid: str, req: TurnRequest, control: TurnControl, workspace: Path,
                   on_started: Callable[[ActiveTurn], None] | None) -> TurnResult:
        s = self.services
        store = s.store
        self._recover_interrupted(sid)
        # 2. history
        last_turn_at = store.meta(sid).get("lastTurnAt")
        pred, history = resolve_history(store, sid, req.branch_from)
        # 3. user node written (and head moved) before any model call
        user_id = new_id("u")
        turn_id = f"{user_id}_reply"
        meta: dict[str, Any] = {"source": req.source}
        if req.agent_id:
            meta["agentId"] = req.agent_id
        if req.model:
            meta["model"] = req.model
        if req.metadata:
            meta.update(req.metadata)
        command = {"command": "compact"} if is_compact_command(req.text) else {}
        meta.update(command)
        # the user node and the running reply, one meta write; acknowledged only afterwards
        user, _reply = store.start_turn(
            sid, Node(id=user_id, role="user", text=req.text, predecessor=pred, metadata=meta),
            Node(id=turn_id, role="assistant", predecessor=user_id, status="running",
                 metadata={"source": req.source, "owner": current_record("turn"), **command}),
            advance_head=req.advance_head)
        history = history.plus(user)
        turn = ActiveTurn(sid, user_id, turn_id, req, control, workspace)
        with self._lock:
            self._active[turn_id] = turn
        s.bus.emit(make_event("user.prompt_submitted", {"node_id": user_id, "text": req.text,
                                                        "source": req.source},
                              session_id=sid, turn_id=turn_id, origin="dispatcher"))
        # 4. turn ContextVars
        writer = SessionNodeWriter(store, sid, advance_head=req.advance_head)
        tokens = (current_session_id.set(sid), current_turn_id.set(turn_id),
                  current_writer.set(writer), current_agent_id.set(req.agent_id),
                  current_message_depth.set(req.message_depth))
        state = LoopState()
        status: NodeStatus = "done"
        error: TurnError | None = None
        swallowed_cancel = False
        leftover: list[str] = []
        try:
            if req.label or req.branch_name:
                store.name_branch(sid, turn_id, req.label or req.branch_name or "")
            started: dict[str, Any] = {"user_node_id": user_id, "assistant_node_id": turn_id,
                                       "text": req.text, "source": req.source,
                                       "predecessor": pred}
            if req.metadata.get("clientTurnId"):  # node metadata (stored): the editor's id
                started["client_turn_id"] = req.metadata["clientTurnId"]
            s.bus.emit(make_event("turn.started", started, session_id=sid, turn_id=turn_id,
                                  origin="dispatcher"))
            if on_started is not None:
                on_started(turn)
            await self._execute(turn, history, state, last_turn_at)
        except (TurnCancelled, asyncio.CancelledError) as exc:
            status = "cancelled"
            if isinstance(exc, asyncio.CancelledError):
                swallowed_cancel = True
        except OpenProgramError as exc:
            status, error = "error", TurnError(message=exc.message, code=exc.code)
        except Exception as exc:
            log.exception("turn %s failed", turn_id)
            status, error = "error", TurnError(message=f"{type(exc).__name__}: {exc}")
        finally:
            leftover = control.close_follow_ups()
            for var, tok in zip((current_session_id, current_turn_id, current_writer,
                                 current_agent_id, current_message_depth), tokens, strict=True):
                var.reset(tok)  # type: ignore[attr-defined]
        # Finalize does blocking git work off the loop (inline on a private loop with nothing
        # else to run); its events are emitted back on the loop so that subscribers always
        # run on the turn's own loop thread.
        pending: list[Event] = []
        cancelled_again = False
        try:
            checkpointer = self.checkpointer(turn.workspace)
        except OpenProgramError:  # a bad workspace config: the turn failed with it already
            checkpointer = None
        args = (s, checkpointer, turn, state, status, error, pending.append)
        task = asyncio.current_task()
        if inline_ok() and task is not None:
            # the caller's own loop with nothing else on it: no thread hop (core.offload); a
            # cancel asked meanwhile is taken as one asked while the thread ran
            asked = task.cancelling()
            done: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
            try:
                done.set_result(finalize_turn(*args))
            except Exception as exc:
                done.set_exception(exc)
            if task.cancelling() > asked:
                try:
                    await asyncio.sleep(0)  # where the pending cancel lands
                except asyncio.CancelledError:
                    cancelled_again = True
        else:
            done = asyncio.ensure_future(asyncio.to_thread(finalize_turn, *args))
        try:
            while not done.done():  # a cancel now must not cut the checkpoint or the commit
                try:
                    await asyncio.shield(done)
                except asyncio.CancelledError:
                    cancelled_again = True
                except Exception:
                    break  # read below from done.result()
            try:
                result = done.result()
            except Exception as exc:  # the store could not be written: report, don't raise
                log.exception("finalizing turn %s failed", turn_id)
                with contextlib.suppress(Exception):
                    store.end_turn(sid, turn_id)
                result = TurnResult(
                    session_id=sid, user_node_id=user_id, assistant_node_id=turn_id,
                    head_id=store.head(sid) or turn_id, status="error", text=state.text,
                    usage=state.usage,
                    error=TurnError(message=f"the turn could not be saved: {exc}"))
        finally:
            with self._lock:
                self._active.pop(turn_id, None)
            self.agents.after_turn(turn, status, leftover)
            await turn.resources.aclose()  # releases the workspace guard after the checkpoint
            for ev in pending:
                s.bus.emit(ev)
        if cancelled_again:
            raise asyncio.CancelledError
        if swallowed_cancel:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        return result

    def _recover_interrupted(self, sid: str) -> None:
        """Mark turns left running by a crashed process as interrupted (and commit that)."""
        store = self.services.store
        live = {t.turn_id for t in self.active_turns(sid)}
        # Opening the session recovered other processes' dead turns; left are this process's
        # own turns that ended without finalizing (their owner record is ours).
        idx = store.index(sid)
        stale = [n for n in (idx.nodes[i] for i in list(idx.running))
                 if n.status == "running" and n.id not in live
                 and (record_is_self(n.metadata.get("owner"))
                      or not record_alive(n.metadata.get("owner")))]
        for node in stale:
            store.update_node(sid, node.id, status="interrupted",
                              text=(node.text + "\n\n[interrupted]").strip(),
                              tool_calls=store.settled(sid, node).tool_calls)
            store.end_turn(sid, node.id)
        if stale:
            store.commit_turn(sid, f"recover: {len(stale)} interrupted turn(s)")

    def _rules_scope(self, turn: ActiveTurn, history: NodeChain, book: RuleBook,
                     parent_sid: Any) -> str | None:
        """The turn's session-rules scope (``Rule.branch``): the nearest reset or copy fork on
        its chain (a delegated turn: on its sender's chain). A ``copy`` fork's first turn
        copies the session rules it would have inherited into its own scope, once."""
        chain = history
        if isinstance(parent_sid, str):
            anchor = turn.request.metadata.get("parentNodeId")
            try:
                chain = self.services.store.chain_view(parent_sid, anchor) \
                    if isinstance(anchor, str) else NodeChain.of([])
            except (NotFound, ValueError):
                chain = NodeChain.of([])
            return self._scopes.scope(parent_sid, chain)
        scope = self._scopes.scope(turn.session_id, chain)
        user = history[-1] if history and history.id_at(-1) == turn.user_node_id else None
        if user is not None and scope == user.id and user.metadata.get("rules") == "copy":
            above = self._scopes.scope(turn.session_id, history.prefix(len(history) - 1))
            for rule in book.rules:
                if rule.scope == "session" and rule.session_id == turn.session_id \
                        and rule.branch == above and rule.origin == "prompt":
                    book.add(rule.model_copy(update={"id": "", "branch": scope}))
        return scope

    async def _execute(self, turn: ActiveTurn, history: NodeChain, state: LoopState,
                       last_turn_at: str | None) -> None:
        s = self.services
        options = s.options_of(turn.session_id)
        settings = turn_settings(s, turn.workspace, options)
        spec_model = turn.request.model or default_model(s, settings) or "offline"
        if turn.request.reasoning_effort and settings is not None:
            settings = with_effort(settings, spec_model, turn.request.reasoning_effort)
        provider = s.provider_factory(spec_model, settings)
        turn.model = provider.model
        checkpointer = self.checkpointer(turn.workspace)

        def paths_changed(paths: Iterable[str]) -> None:
            paths = list(paths)
            if not paths:
                turn.full_scan = True
            turn.touched.update(paths)
            if checkpointer is not None:
                checkpointer.note_paths(paths)

        async def before_mutation() -> None:
            if checkpointer is None or turn.baseline_done:
                return
            turn.baseline_done = True
            # From the first edit to the checkpoint the workspace belongs to this turn, so
            # another session's edits are never credited to it. A turn that cannot get it in
            # time goes on (logged): attribution is then shared, never an edit lost.
            try:
                await turn.resources.enter_async_context(
                    checkpointer.turn_guard(timeout=GUARD_TIMEOUT))
            except CheckpointError:
                log.warning("workspace %s busy for %ss; turn %s goes on unguarded",
                            turn.workspace, GUARD_TIMEOUT, turn.turn_id)
            if not checkpointer.baseline_ready(turn.session_id):  # else nothing to do
                await asyncio.to_thread(checkpointer.ensure_baseline, turn.session_id)

        async def buffer_edit(rel: str) -> None:
            # the first edit of this turn into an unsaved buffer: from now on checkpoints
            # record that buffer, and its text before the edit (the user's unsaved changes)
            # is checkpointed first, so the turn's checkpoint holds only the agent's change
            buffers = s.buffers
            if checkpointer is None or buffers is None or rel in turn.buffers_recorded:
                return
            await before_mutation()
            turn.buffers_recorded.add(rel)
            path = turn.workspace.resolve() / rel
            sid = turn.session_id
            try:
                await asyncio.to_thread(checkpointer.record_buffer, sid, rel,
                                        lambda: buffers.unsaved(sid, path))
            except CheckpointError as exc:  # the edit goes on; its undo may then be partial
                log.warning("could not checkpoint the buffer of %s: %s", rel, exc.message)
                turn.warnings.append(f"checkpoint of the unsaved buffer of {rel} failed: "
                                     f"{exc.message}")

        ctx = ToolContext(workspace=turn.workspace, session_id=turn.session_id,
                          turn_id=turn.turn_id, cancel=turn.control.cancel, asker=s.asker,
                          question_timeout=options.question_timeout or s.question_timeout,
                          on_paths_changed=paths_changed, editor=s.editor,
                          buffers=s.buffers, language=s.language,
                          on_buffer_edit=buffer_edit,
                          questions=s.questions, settings=settings, collab=s.collab,
                          images=s.store.images)
        definition = agent_definition(s, turn)
        hooks = turn.hooks = await start_hooks(s, turn)
        every = await turn_tools(s, turn.workspace, session_id=turn.session_id,
                                 turn_id=turn.turn_id, options=options)
        tools = admitted_tools(every, definition)
        window = resolve_window(provider.context_window, s.context.config.window_override)
        if window < BRIEF_TOOLS_BELOW:  # the request carries the brief specs that were counted
            tools = tools.brief()
        if history and history.id_at(-1) == turn.user_node_id \
                and not is_compact_command(turn.request.text):
            history = history.with_last(await expand_user_message(
                s, turn.workspace, turn.session_id, history[-1]))
            env = await asyncio.to_thread(environment_note, turn.workspace)
            if env != last_note(history.prefix(len(history) - 1)):  # changed: told again
                user = history[-1]
                history = history.with_last(s.store.update_node(
                    turn.session_id, user.id, metadata={**user.metadata, "environment": env}))
        req = turn.request
        delegated = req.source in ("agent_spawn", "send_message")
        parent_sid = req.metadata.get("parentSessionId")
        book = s.rules_for(turn.workspace)
        scope = self._rules_scope(turn, history, book, parent_sid if delegated else None)
        if hooks is not None:
            hooks.rules_branch = scope  # the destructive-commands gate reads the same scope
        runner = ToolRunner(tools=tools, ctx=ctx, bus=s.bus, gates=s.gates,
                            mode=req.permission_mode or s.permission_mode,
                            rules=with_client_rules(book, req.rules),
                            approver=s.approver,
                            before_mutation=before_mutation, hooks=hooks,
                            all_tools=every if definition is not None else None,
                            admission=f"agent definition {definition.name!r}"
                            if definition is not None else "",
                            label=(req.label or req.agent_id) if delegated else None,
                            # a delivered turn runs under its sender's session rules
                            rules_session=parent_sid if delegated and isinstance(
                                parent_sid, str) else turn.session_id,
                            rules_branch=scope)
        system = system_extra(s, turn, definition, tools)
        if is_compact_command(turn.request.text):  # manual compaction: no model reply
            turn.prep = await compact_command(
                s, session_id=turn.session_id, history=history, provider=provider,
                runner=runner, control=turn.control, last_turn_at=last_turn_at, state=state,
                system_extra=system)
            return
        context_note: str | None = hooks.start_context if hooks is not None else None
        if hooks is not None and turn.request.source in PROMPT_SOURCES:
            answer = await hooks.user_prompt(turn.request.text)
            if answer.blocked:
                raise HookBlocked(f"the prompt was blocked by a UserPromptSubmit hook: "
                                  f"{answer.blocked}")
            context_note = "\n".join(n for n in (context_note, answer.context) if n) or None
        prep = await prepare_context(s, session_id=turn.session_id, history=history,
                                     provider=provider, runner=runner, control=turn.control,
                                     last_turn_at=last_turn_at, system_extra=system)
        if context_note:  # shown to the model after the prompt, and stored as such
            s.context.append_message(prep, state.interject("hook_context", context_note))
        turn.prep = prep
        if prep.summarizer_usage is not None:  # the turn pays for its compaction
            state.usage = state.usage.add(prep.summarizer_usage)
        store = s.store

        def persist_tool(record: ToolCallRecord) -> None:
            # The call's end is written once, as its tool node: the reply already lists the
            # call (persist_started) and is written again at the next call or the turn's end;
            # until then readers and recovery take the call's end from this node
            # (store.reply_calls).
            store.append(turn.session_id, Node(
                id=_tool_node_id(turn.turn_id, record.id), role="tool", text=record.output or "",
                caller=turn.turn_id, status="done" if record.status == "completed" else "error",
                metadata={"toolCallId": record.id, "name": record.name, "kind": record.kind,
                          "input": record.input, "step": record.step, **ended_call(record),
                          **({"attachments": record.attachments} if record.attachments
                             else {}),
                          **({"images": [i.wire() for i in record.images]} if record.images
                             else {})}))

        def persist_started(call: ToolCall, step: int) -> None:
            # the reply so far and the call now running, so a crash leaves them on record
            running = ToolCallRecord(id=call.id, name=call.name, input=call.arguments,
                                     status="in_progress", step=step)
            tool = tools.get(call.name)
            if tool is not None:
                running.kind = tool.kind
                with contextlib.suppress(Exception):  # a title from bad arguments is no title
                    running.title = tool.title(tool.parse(call.arguments))
            store.update_node(turn.session_id, turn.turn_id, text=state.text,
                              tool_calls=[*state.tool_calls, running],
                              metadata={**store.get_node(turn.session_id, turn.turn_id).metadata,
                                        "steps": list(state.steps),
                                        "interjections": list(state.interjections),
                                        **({"thoughts": state.stored_thoughts()}
                                           if state.thoughts else {})})

        before_stop = None
        if hooks is not None and (hooks.has("SubagentStop") if hooks.subagent
                                  else hooks.has("Stop")):
            turn_hooks = hooks

            async def before_stop(st: LoopState) -> str | None:
                return await turn_hooks.stop(st.steps[-1] if st.steps else "")

        await run_loop(s, prep=prep, provider=provider, runner=runner, control=turn.control,
                       state=state, hooks=LoopHooks(on_tool_finished=persist_tool,
                                                    on_tool_started=persist_started,
                                                    before_stop=before_stop))
        turn.warnings.extend(runner.faults)  # a tool the machine failed (read-only, full, …)
        ending = stop_warning(state)
        if ending is not None:
            log.info("turn %s: %s", turn.turn_id, ending)
            turn.warnings.append(ending)
        elif not state.text and not state.tool_calls and not turn.control.cancelled:
            empty = "the model sent an empty reply (no text and no tool calls)"
            log.warning("turn %s: %s", turn.turn_id, empty)
            turn.warnings.append(empty)
        if hooks is not None and hooks.policies.untested_edits:
            note = hooks.untested.note()
            if note:
                turn.warnings.append(note)
                s.bus.emit(make_event("policy.noted", {"policy": "untested-edits",
                                                       "message": note},
                                      session_id=turn.session_id, turn_id=turn.turn_id,
                                      origin="hooks"))
