"""The turn lifecycle: ``Dispatcher.run_turn`` runs the seven steps of docs/architecture.md
("One turn"), one named method each.

How a turn ends (stated here, enforced by ``_work`` and ``_finish`` only):

- ``run_turn`` never raises for the turn's own failures. A cancel (``TurnCancelled``, or the
  task's own cancellation) ends it ``cancelled``, or ``interrupted`` when the shutdown asked
  it (``TurnControl.interrupt``: the server or editor stopped it, not the user; it reports
  ``cancelled``); an ``OpenProgramError`` ends it ``error`` with that error's message and
  code; any other exception ``error`` with its type and message (logged with its traceback).
- Once its user node is written a turn is always finalized (step 7), and nothing cuts the
  finalize short: it runs to its end on a thread under ``asyncio.shield``, or inline when the
  turn runs on a private loop with nothing else on it (``core.offload``).
- The task's cancellation is reported as asyncio expects. One that arrived during steps 5-6
  ended the turn: it is consumed (``uncancel``) and the caller gets the cancelled result. One
  that arrived during the finalize is raised once the finalize is done.
- A finalize that cannot write the store returns an ``error`` result ("the turn could not be
  saved") and takes the turn off the session's running ones; what was written stays.
- Then, whatever happened: the turn leaves the active ones, collaboration hears of its end
  (with the follow-ups nobody took), its resources are released (the workspace guard, after
  the checkpoint) and the finalize's events are emitted on the turn's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram_lsp.agent.control import TurnControl
from openprogram_lsp.agent.loop import LoopHooks, LoopState, stop_warning
from openprogram_lsp.agent.tool_exec import ToolRunner
from openprogram_lsp.agents.definitions import AgentDef
from openprogram_lsp.approvals.rulebook import RuleBook, with_client_rules
from openprogram_lsp.config import Settings
from openprogram_lsp.context.attachments import downscaled_notes
from openprogram_lsp.context.budget import resolve_window
from openprogram_lsp.context.environment import environment_note, last_note
from openprogram_lsp.context.render import is_compact_command
from openprogram_lsp.context.types import TurnPrep
from openprogram_lsp.core.chain import NodeChain
from openprogram_lsp.core.errors import (
    HookBlocked,
    NotFound,
    OpenProgramError,
    ProviderError,
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
    ClientOptions,
    Node,
    NodeStatus,
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
from openprogram_lsp.dispatcher.tool_records import ToolRecords
from openprogram_lsp.dispatcher.tool_sources import expand_user_message, turn_tools
from openprogram_lsp.dispatcher.turn_checkpoints import TurnCheckpoints
from openprogram_lsp.dispatcher.turn_hooks import (
    PROMPT_SOURCES,
    admitted_tools,
    agent_definition,
    bind_model,
    start_hooks,
    stop_failure,
    system_extra,
)
from openprogram_lsp.dispatcher.turn_settings import default_model, turn_settings, with_effort
from openprogram_lsp.events.bus import Event, make_event
from openprogram_lsp.hooks.engine import TurnHooks
from openprogram_lsp.providers.base import Provider
from openprogram_lsp.store.owner import current_record
from openprogram_lsp.store.session_handle import SessionHandle
from openprogram_lsp.tools.base import ToolContext
from openprogram_lsp.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

_TURN_VARIABLES = (current_session_id, current_turn_id, current_agent_id,
                   current_message_depth)


@dataclass(slots=True)
class Outcome:
    """How steps 5-6 of a turn ended (the rules: this module's docstring)."""

    status: NodeStatus = "done"
    error: TurnError | None = None
    task_cancelled: bool = False  # the task's own cancel ended it: consumed after finalize
    leftover: list[str] = field(default_factory=list)  # follow-ups nobody took

    @classmethod
    def of(cls, exc: BaseException, turn: ActiveTurn) -> Outcome:
        """The outcome an exception out of the turn's work stands for."""
        if isinstance(exc, TurnCancelled | asyncio.CancelledError):
            # the shutdown stopped it (``TurnControl.interrupt``), not the user
            return cls("interrupted" if turn.control.interrupted else "cancelled",
                       task_cancelled=isinstance(exc, asyncio.CancelledError))
        if isinstance(exc, OpenProgramError):
            return cls("error", TurnError(message=exc.message, code=exc.code))
        log.error("turn %s failed", turn.turn_id, exc_info=exc)
        return cls("error", TurnError(message=f"{type(exc).__name__}: {exc}"))


@contextlib.contextmanager
def turn_variables(turn: ActiveTurn) -> Iterator[None]:
    """Step 4: bind the turn's ContextVars (session, turn, agent, message depth) for the
    code below it; reset when the block ends."""
    values = (turn.session_id, turn.turn_id, turn.request.agent_id,
              turn.request.message_depth)
    tokens = [var.set(value) for var, value in  # type: ignore[attr-defined]
              zip(_TURN_VARIABLES, values, strict=True)]
    try:
        yield
    finally:
        for var, tok in zip(_TURN_VARIABLES, tokens, strict=True):
            var.reset(tok)  # type: ignore[attr-defined]


@contextlib.contextmanager
def _events_to(services: Services, sid: str,
               on_event: Callable[[Event], None] | None) -> Iterator[None]:
    """Hand the session's events to ``on_event`` while the block runs."""
    if on_event is None:
        yield
        return
    handler = on_event
    unsubscribe = services.bus.subscribe(
        lambda ev: handler(ev) if ev.session_id == sid else None)
    try:
        yield
    finally:
        unsubscribe()


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
        self.defer_checkpoints = True
        """A turn that ends during the workspace's first walk leaves its checkpoint pending
        (committed and announced after the walk) instead of waiting; False for a caller that
        ends with the turn (the CLI's chat)."""

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
        """Stop every running turn (shutdown): the editor's turns are recorded ``interrupted``
        (nobody cancelled them); subagents' are cancelled with their jobs, as their listing says."""
        turns = self.active_turns()
        for t in turns:
            if t.request.source == "agent_spawn":
                t.control.request_cancel()
            else:
                t.control.interrupt()
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
        """Run one turn on the current loop and return its result (never raises on turn
        errors: this module's docstring). ``on_session`` learns the session id before the
        turn's first event; ``on_started`` gets the turn once it is announced."""
        control = control or TurnControl()
        control.bind_loop(asyncio.get_running_loop())
        sid = self._session_of(req)  # 1. session created or loaded ...
        with _events_to(self.services, sid, on_event), \
                self._open_session(sid) as session:  # ... held, recovered once
            workspace = self._workspace_of(req, session)
            with resolved(workspace):  # its real path resolved once for all of the turn
                if on_session is not None:
                    on_session(sid)
                last_turn_at = session.meta().get("lastTurnAt")
                pred, history = resolve_history(session, req.branch_from)  # 2. history
                turn, history = self._write_user_node(  # 3. user node, before any model call
                    session, req, control, workspace, pred, history)
                state = LoopState()
                with turn_variables(turn):  # 4. turn ContextVars
                    outcome = await self._work(turn, history, state, last_turn_at,
                                               on_started)  # 5-6. context, loop
                return await self._finish(turn, state, outcome)  # 7. finalize

    # -- steps 1-3: session, history, user node -----------------------------------------------

    def _session_of(self, req: TurnRequest) -> str:
        """Step 1: the request's session (a new one titled from the first message, so a
        listing names it while it runs); SessionBusy when it already runs a user turn."""
        store = self.services.store
        if req.session_id:
            if not store.exists(req.session_id):
                raise NotFound(f"unknown session id {req.session_id!r}")
            sid = req.session_id
        else:
            sid = store.create_session(workspace=str(req.workspace or self.services.workspace),
                                       title=first_line(req.text))
        if req.advance_head and req.source == "user" and self.user_turn(sid) is not None:
            raise SessionBusy(f"session {sid} is already running a turn; wait for it, "
                              "interject with openprogram/steer, or cancel it")
        return sid

    def _open_session(self, sid: str) -> contextlib.AbstractContextManager[SessionHandle]:
        """Step 1: hold the session for the whole turn (another process's turn here is
        refused, never forked) and recover, once, the turns left running in it."""
        return SessionHandle.open(self.services.store, sid, "turn",
                                  live=lambda: {t.turn_id for t in self.active_turns(sid)})

    def _workspace_of(self, req: TurnRequest, session: SessionHandle) -> Path:
        """The turn's workspace: the request's, else the session's, else the server's."""
        if req.workspace is not None:
            return Path(req.workspace)
        stored = session.meta().get("workspace")
        return Path(stored) if stored else Path(self.services.workspace)

    def _write_user_node(self, session: SessionHandle, req: TurnRequest, control: TurnControl,
                         workspace: Path, pred: str | None,
                         history: NodeChain) -> tuple[ActiveTurn, NodeChain]:
        """Step 3: the user node and the running reply, in one meta write (the head moved
        when the turn advances it), before any model call; then the turn is active and its
        prompt acknowledged (``user.prompt_submitted``)."""
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
        user, _reply = session.start_turn(
            Node(id=user_id, role="user", text=req.text, predecessor=pred, metadata=meta),
            Node(id=turn_id, role="assistant", predecessor=user_id, status="running",
                 metadata={"source": req.source, "owner": current_record("turn"), **command}),
            advance_head=req.advance_head)
        turn = ActiveTurn(session, session.id, user_id, turn_id, req, control, workspace)
        turn.warnings.extend(downscaled_notes(meta.get("context")))  # told with the result
        with self._lock:
            self._active[turn_id] = turn
        self.services.bus.emit(make_event(
            "user.prompt_submitted", {"node_id": user_id, "text": req.text,
                                      "source": req.source},
            session_id=session.id, turn_id=turn_id, origin="dispatcher"))
        return turn, history.plus(user)

    # -- steps 5-6: context and loop ----------------------------------------------------------

    async def _work(self, turn: ActiveTurn, history: NodeChain, state: LoopState,
                    last_turn_at: str | None,
                    on_started: Callable[[ActiveTurn], None] | None) -> Outcome:
        """Steps 5-6 under the outcome rules: whatever ends them is the turn's outcome,
        never raised."""
        outcome = Outcome()
        try:
            self._announce(turn, history[-1].predecessor, on_started)
            await self._execute(turn, history, state, last_turn_at)
        except (TurnCancelled, asyncio.CancelledError, Exception) as exc:
            outcome = Outcome.of(exc, turn)
            if isinstance(exc, ProviderError) and turn.hooks is not None:  # observed
                kind = stop_failure(exc)
                await turn.hooks.observe("StopFailure", kind, error=kind,
                                         error_details=exc.message,
                                         last_assistant_message=state.text)
        finally:
            outcome.leftover = turn.control.close_follow_ups()
        return outcome

    def _announce(self, turn: ActiveTurn, pred: str | None,
                  on_started: Callable[[ActiveTurn], None] | None) -> None:
        """Name the turn's branch when asked, then ``turn.started`` and ``on_started``."""
        req = turn.request
        if req.label or req.branch_name:
            turn.session.name_branch(turn.turn_id, req.label or req.branch_name or "")
        started: dict[str, Any] = {"user_node_id": turn.user_node_id,
                                   "assistant_node_id": turn.turn_id, "text": req.text,
                                   "source": req.source, "predecessor": pred}
        if req.metadata.get("clientTurnId"):  # node metadata (stored): the editor's id
            started["client_turn_id"] = req.metadata["clientTurnId"]
        if req.agent_id:  # a subagent's (or a delivered message's) turn: editors show it live
            started["agent_id"] = req.agent_id
        self.services.bus.emit(make_event("turn.started", started, session_id=turn.session_id,
                                          turn_id=turn.turn_id, origin="dispatcher"))
        if on_started is not None:
            on_started(turn)

    async def _execute(self, turn: ActiveTurn, history: NodeChain, state: LoopState,
                       last_turn_at: str | None) -> None:
        """Steps 5-6: the turn's model, hooks and tools; its context prepared (compacted
        when over budget); then the loop, each tool call on record as it runs."""
        s = self.services
        options = s.options_of(turn.session_id)
        provider, settings = self._provider(turn, options)
        checkpoints = TurnCheckpoints(turn, self.checkpointer(turn.workspace), s.buffers)
        definition = agent_definition(s, turn)
        hooks = turn.hooks = await start_hooks(s, turn)
        every = await turn_tools(s, turn.workspace, session_id=turn.session_id,
                                 turn_id=turn.turn_id, options=options)
        tools = admitted_tools(every, definition)
        if resolve_window(provider.context_window,
                          s.context.config.window_override) < BRIEF_TOOLS_BELOW:
            tools = tools.brief()  # the request carries the brief specs that were counted
        history = await self._user_message(turn, history)
        runner = self._tool_runner(turn, history, self._tool_context(
            turn, options, settings, checkpoints), checkpoints, tools, every, definition)
        bind_model(hooks, turn, provider, lambda spec: s.provider_factory(spec, settings),
                   every, runner.ctx)
        system = system_extra(s, turn, definition, tools)
        if is_compact_command(turn.request.text):  # manual compaction: no model reply
            turn.prep = await compact_command(
                s, session=turn.session, history=history, provider=provider, runner=runner,
                control=turn.control, last_turn_at=last_turn_at, state=state,
                system_extra=system)
            return
        turn.prep = prep = await self._context(turn, history, provider, runner, state,
                                               last_turn_at, system)
        records = ToolRecords(turn.session, turn.turn_id, tools, state)
        await run_loop(s, prep=prep, provider=provider, runner=runner, control=turn.control,
                       state=state, hooks=LoopHooks(on_tool_finished=records.finished,
                                                    on_tool_started=records.started,
                                                    before_stop=_stop_hook(hooks)))
        self._note_ending(turn, state, runner)

    def _provider(self, turn: ActiveTurn,
                  options: ClientOptions) -> tuple[Provider, Settings | None]:
        """The turn's model (the request's, else the settings') and the settings it runs
        with (the request's reasoning effort applied)."""
        s = self.services
        settings = turn_settings(s, turn.workspace, options)
        spec_model = turn.request.model or default_model(s, settings) or "offline"
        if turn.request.reasoning_effort and settings is not None:
            settings = with_effort(settings, spec_model, turn.request.reasoning_effort)
        provider = s.provider_factory(spec_model, settings)
        turn.model = provider.model
        return provider, settings

    async def _user_message(self, turn: ActiveTurn, history: NodeChain) -> NodeChain:
        """The turn's user message as the model gets it: a custom command or an MCP prompt
        expanded, and the workspace-state note when it changed since the last one told."""
        if not history or history.id_at(-1) != turn.user_node_id \
                or is_compact_command(turn.request.text):
            return history
        s = self.services
        history = history.with_last(await expand_user_message(
            s, turn.workspace, turn.session, history[-1]))
        env = await asyncio.to_thread(environment_note, turn.workspace)
        if env != last_note(history.prefix(len(history) - 1)):  # changed: told again
            user = history[-1]
            history = history.with_last(turn.session.update_node(
                user.id, metadata={**user.metadata, "environment": env}))
        return history

    def _tool_context(self, turn: ActiveTurn, options: ClientOptions,
                      settings: Settings | None, checkpoints: TurnCheckpoints) -> ToolContext:
        """What the turn's tools see: workspace, session, editor, and where their edits go."""
        s = self.services
        return ToolContext(workspace=turn.workspace, session_id=turn.session_id,
                           turn_id=turn.turn_id, cancel=turn.control.cancel, asker=s.asker,
                           question_timeout=options.question_timeout or s.question_timeout,
                           on_paths_changed=checkpoints.paths_changed, editor=s.editor,
                           buffers=s.buffers, language=s.language,
                           on_buffer_edit=checkpoints.buffer_edit,
                           questions=s.questions, settings=settings, collab=s.collab,
                           images=s.store.images)

    def _tool_runner(self, turn: ActiveTurn, history: NodeChain, ctx: ToolContext,
                     checkpoints: TurnCheckpoints, tools: ToolRegistry, every: ToolRegistry,
                     definition: AgentDef | None) -> ToolRunner:
        """The turn's tool runner: gates, permission mode, the session rules of the turn's
        scope (a delivered turn: its sender's), approval, hooks and the checkpoints' guard."""
        s, req, hooks = self.services, turn.request, turn.hooks
        delegated = req.source in ("agent_spawn", "send_message")
        parent_sid = req.metadata.get("parentSessionId")
        book = s.rules_for(turn.workspace)
        scope = self._rules_scope(turn, history, book, parent_sid if delegated else None)
        if hooks is not None:
            hooks.rules_branch = scope  # the destructive-commands gate reads the same scope
        return ToolRunner(tools=tools, ctx=ctx, bus=s.bus, gates=s.gates,
                          mode=req.permission_mode or s.permission_mode,
                          rules=with_client_rules(book, req.rules), approver=s.approver,
                          before_mutation=checkpoints.before_mutation,
                          hooks=hooks,
                          all_tools=every if definition is not None else None,
                          admission=f"agent definition {definition.name!r}"
                          if definition is not None else "",
                          label=(req.label or req.agent_id) if delegated else None,
                          rules_session=parent_sid if delegated and isinstance(
                              parent_sid, str) else turn.session_id,
                          rules_branch=scope)

    async def _context(self, turn: ActiveTurn, history: NodeChain, provider: Provider,
                       runner: ToolRunner, state: LoopState, last_turn_at: str | None,
                       system: str) -> TurnPrep:
        """Step 5: the prompt past the UserPromptSubmit hooks (HookBlocked when one blocks
        it), then the context prepared, compacted when over budget, with the hooks' notes
        shown after the prompt; the turn pays for its compaction."""
        s, hooks = self.services, turn.hooks
        prompt_note: str | None = None
        if hooks is not None and turn.request.source in PROMPT_SOURCES:
            answer = await hooks.user_prompt(turn.request.text)
            if answer.blocked:
                raise HookBlocked(f"the prompt was blocked by a UserPromptSubmit hook: "
                                  f"{answer.blocked}")
            prompt_note = answer.context
        prep = await prepare_context(s, session=turn.session, history=history,
                                     provider=provider, runner=runner, control=turn.control,
                                     last_turn_at=last_turn_at, system_extra=system)
        # (read after: a compaction's SessionStart hooks may have added to it)
        start_note = hooks.start_context if hooks is not None else None
        context_note = "\n".join(n for n in (start_note, prompt_note) if n) or None
        if context_note:  # shown to the model after the prompt, and stored as such
            s.context.append_message(prep, state.interject("hook_context", context_note))
        if prep.summarizer_usage is not None:
            state.usage = state.usage.add(prep.summarizer_usage)
        return prep

    def _note_ending(self, turn: ActiveTurn, state: LoopState, runner: ToolRunner) -> None:
        """Warnings the loop's end leaves on the turn: tools the machine failed, a stop at a
        limit, an empty reply, edits no test ran after (the untested-edits policy)."""
        turn.warnings.extend(runner.faults)  # a tool the machine failed (read-only, full, …)
        ending = stop_warning(state)
        if ending is not None:
            log.info("turn %s: %s", turn.turn_id, ending)
            turn.warnings.append(ending)
        elif not state.text and not state.tool_calls and not turn.control.cancelled:
            empty = "the model sent an empty reply (no text and no tool calls)"
            log.warning("turn %s: %s", turn.turn_id, empty)
            turn.warnings.append(empty)
        hooks = turn.hooks
        if hooks is not None and hooks.policies.untested_edits:
            note = hooks.untested.note()
            if note:
                turn.warnings.append(note)
                self.services.bus.emit(make_event(
                    "policy.noted", {"policy": "untested-edits", "message": note},
                    session_id=turn.session_id, turn_id=turn.turn_id, origin="hooks"))

    # -- step 7: finalize ---------------------------------------------------------------------

    async def _finish(self, turn: ActiveTurn, state: LoopState, outcome: Outcome) -> TurnResult:
        """Step 7 under the outcome rules: finalize to the end whatever is cancelled
        meanwhile, then let the turn go; the task's cancellation settled last."""
        pending: list[Event] = []  # the finalize's events, emitted here on the turn's loop
        try:
            result, cancelled_again = await self._finalize(turn, state, outcome, pending.append)
        finally:
            with self._lock:
                self._active.pop(turn.turn_id, None)
            self.agents.after_turn(turn, outcome.status, outcome.leftover)
            if turn.hooks is not None and turn.request.source in PROMPT_SOURCES:
                turn.hooks.engine.idle(turn.hooks)  # Notification idle_prompt, if it waits
            await turn.resources.aclose()  # releases the workspace guard after the checkpoint
            for ev in pending:
                self.services.bus.emit(ev)
        if cancelled_again:
            raise asyncio.CancelledError
        task = asyncio.current_task()
        if outcome.task_cancelled and task is not None:
            task.uncancel()
        return result

    async def _finalize(self, turn: ActiveTurn, state: LoopState, outcome: Outcome,
                        emit: Callable[[Event], None]) -> tuple[TurnResult, bool]:
        """(the turn's result, whether a cancel arrived meanwhile): ``finalize_turn`` run to
        its end, or the error result when it could not write the store."""
        try:
            checkpointer: Checkpointer | None = self.checkpointer(turn.workspace)
        except OpenProgramError:  # a bad workspace config: the turn failed with it already
            checkpointer = None
        loop, bus = asyncio.get_running_loop(), self.services.bus

        def later(event: Event) -> None:  # a checkpoint committed after the turn's end
            with contextlib.suppress(RuntimeError):  # (the loop is closed: nobody listens)
                loop.call_soon_threadsafe(bus.emit, event)

        done, cancelled_again = await _to_the_end(
            finalize_turn, self.services, checkpointer, turn, state, outcome.status,
            outcome.error, emit, later if self.defer_checkpoints else None)
        try:
            return done.result(), cancelled_again
        except Exception as exc:  # the store could not be written: report, don't raise
            log.exception("finalizing turn %s failed", turn.turn_id)
            with contextlib.suppress(Exception):
                turn.session.end_turn(turn.turn_id)
            return TurnResult(
                session_id=turn.session_id, user_node_id=turn.user_node_id,
                assistant_node_id=turn.turn_id, head_id=turn.session.head() or turn.turn_id,
                status="error", text=state.text, usage=state.usage,
                error=TurnError(message=f"the turn could not be saved: {exc}")), \
                cancelled_again

    # -- rules scope -------------------------------------------------------------------------

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
        own = turn.session.rules_forks
        scope = self._scopes.scope(turn.session_id, chain, lambda _sid: own())
        user = history[-1] if history and history.id_at(-1) == turn.user_node_id else None
        if user is not None and scope == user.id and user.metadata.get("rules") == "copy":
            above = self._scopes.scope(turn.session_id, history.prefix(len(history) - 1),
                                       lambda _sid: own())
            for rule in book.rules:
                if rule.scope == "session" and rule.session_id == turn.session_id \
                        and rule.branch == above and rule.origin == "prompt":
                    book.add(rule.model_copy(update={"id": "", "branch": scope}))
        return scope


def _stop_hook(hooks: TurnHooks | None) -> Callable[[LoopState], Awaitable[str | None]] | None:
    """The loop's ``before_stop``: the turn's Stop hooks (a subagent's: SubagentStop), when
    it has any."""
    if hooks is None or not (hooks.has("SubagentStop") if hooks.subagent else hooks.has("Stop")):
        return None
    turn_hooks = hooks

    async def before_stop(state: LoopState) -> str | None:
        return await turn_hooks.stop(state.steps[-1] if state.steps else "")

    return before_stop


async def _to_the_end(call: Callable[..., TurnResult],
                      *args: Any) -> tuple[asyncio.Future[TurnResult], bool]:
    """Run blocking ``call`` to its end whatever is cancelled meanwhile: off the loop on a
    thread, or inline when the loop is private with nothing else on it (``core.offload``).
    Returns its settled future and whether a cancel arrived meanwhile (inline, one asked
    during the call is taken as one asked while a thread ran)."""
    cancelled = False
    task = asyncio.current_task()
    if inline_ok() and task is not None:
        asked = task.cancelling()
        done: asyncio.Future[TurnResult] = asyncio.get_running_loop().create_future()
        try:
            done.set_result(call(*args))
        except Exception as exc:
            done.set_exception(exc)
        if task.cancelling() > asked:
            try:
                await asyncio.sleep(0)  # where the pending cancel lands
            except asyncio.CancelledError:
                cancelled = True
    else:
        done = asyncio.ensure_future(asyncio.to_thread(call, *args))
    while not done.done():
        try:
            await asyncio.shield(done)
        except asyncio.CancelledError:
            cancelled = True
        except Exception:
            break  # the caller reads it from done.result()
    return done, cancelled
