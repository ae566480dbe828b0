"""The hook engine: which hooks apply to a workspace, running them for a turn, last results.

``HookEngine`` is one per dispatcher. ``TurnHooks`` is what one turn uses: it is bound in the
``current_hooks`` ContextVar so the process-wide tool gates (see ``gate.py``) find the hooks of
the turn whose call they are judging.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from openprogram_lsp.agents.catalog import AgentCatalog, AgentDirs, agent_dirs
from openprogram_lsp.agents.definitions import AgentDef
from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.core.fsutil import file_stamps
from openprogram_lsp.core.ports import AgentDefinitionRow
from openprogram_lsp.core.turn_root import real_path
from openprogram_lsp.hooks import decisions
from openprogram_lsp.hooks.approval import Pending
from openprogram_lsp.hooks.condition import holds
from openprogram_lsp.hooks.config import (
    WORKSPACE_FILES,
    HookConfig,
    HookSpec,
    Policies,
    claude_dir,
    user_files,
)
from openprogram_lsp.hooks.http_hook import run_http
from openprogram_lsp.hooks.listing import HookListing, HookRunSummary
from openprogram_lsp.hooks.matcher import matches, matches_tool
from openprogram_lsp.hooks.model_hook import HookModel
from openprogram_lsp.hooks.policies import UntestedEdits
from openprogram_lsp.hooks.runner import HookRun, run_hook, sourced_env
from openprogram_lsp.hooks.sources import load_config
from openprogram_lsp.hooks.transcript import Transcript
from openprogram_lsp.hooks.trust import TrustState, TrustStore
from openprogram_lsp.tools.claude_tools import (
    claude_input,
    claude_name,
    claude_response,
    our_input,
)

log = logging.getLogger(__name__)

MAX_LIVE = 1024  # sessions kept for their SessionEnd
MAX_LATER = 32  # notes of async hooks kept per session for its next turn
_CALL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure",
                          "PermissionRequest"})
# async hooks run here, never holding a turn up (their processes die with the server's)
_BACKGROUND = ThreadPoolExecutor(max_workers=4, thread_name_prefix="async-hook")
CLAUDE_MODES = {"ask": "default", "accept-edits": "acceptEdits", "plan": "plan",
                "bypass": "bypassPermissions"}


class HookEngine:
    """Hook definitions per workspace (re-read when their files change), trust, last runs."""

    def __init__(self, home: Path, *, user_files: list[Path] | None = None,
                 policies: Policies | None = None, claude_dir: Path | None = None) -> None:
        self.home = home
        self.claude_dir = claude_dir  # Claude Code's user directory (None: ~/.claude)
        self.policies = policies
        self.trust = TrustStore(home)
        self.user_files = user_files
        self._lock = threading.Lock()
        self._configs: dict[Path, tuple[tuple[Any, ...], HookConfig]] = {}
        self._agents = AgentCatalog(self.agent_dirs)
        self.last: dict[str, HookRunSummary] = {}  # hook id -> last run
        self._seen_sessions: set[str] = set()
        self._live: dict[str, TurnHooks] = {}  # session -> its last turn's hooks (SessionEnd)
        self._transcripts: dict[Path, Transcript] = {}  # kept across turns (the last 32)
        self._later: dict[str, list[str]] = {}  # session -> async hooks' notes for its next turn
        self._once: dict[str, set[str]] = {}  # session -> its ``once`` hooks that ran
        self._command_env: dict[str, dict[str, str]] = {}  # session -> its CLAUDE_ENV_FILE's
        self.idle_after = 60.0  # seconds a session waits for a prompt before idle_prompt
        # session -> its idle_prompt timer and the loop it is on
        self._idle: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.TimerHandle]] = {}
        self._idle_tasks: set[asyncio.Task[None]] = set()

    def _user_files(self) -> list[Path]:
        return self.user_files if self.user_files is not None else user_files()

    def _stamp(self, workspace: str, extra: list[str]) -> tuple[Any, ...]:
        return file_stamps([*map(str, self._user_files()),
                            *(f"{workspace}/{rel}" for rel in WORKSPACE_FILES), *extra])

    def agent_dirs(self, workspace: Path) -> AgentDirs:
        """Where agent definitions are read from: the user's, then the workspace's."""
        claude = self.claude_dir if self.claude_dir is not None else claude_dir()
        return agent_dirs(self._user_files()[0].parent, str(workspace), claude)

    def definitions(self, workspace: Path) -> Definitions:
        """The workspace's hooks and agent definitions as they are now, each stamped once:
        what one turn asks about, runs and offers (``Definitions``)."""
        real = real_path(workspace)
        return Definitions(self._config(real), self._agents_of(real))

    def agents(self, workspace: Path) -> dict[str, AgentDef]:
        """Agent definitions by name (workspace ones override the user's), re-read on change
        (of a directory's listing or of any definition file in it)."""
        return self._agents_of(real_path(workspace))

    def _agents_of(self, real: str) -> dict[str, AgentDef]:
        return self._agents.agents(Path(real))

    def definition_trust(self, workspace: Path, item: HookSpec | AgentDef) -> TrustState:
        """``trusted`` (user-level or approved), ``rejected`` or ``unknown``."""
        if item.scope == "user":
            return "trusted"
        return self.trust.state(workspace, item.id)

    def pending_definitions(self, workspace: Path,
                            defs: Definitions | None = None) -> list[Pending]:
        """Workspace hooks and agent definitions the user has not decided on yet (of ``defs``,
        default: as they are now)."""
        defs = defs or self.definitions(workspace)
        out = [Pending(h.id, "hook", h.describe()) for h in defs.config.hooks
               if self.trust_state(workspace, h) == "unknown"]
        out.extend(Pending(a.id, "agent", a.describe()) for a in defs.agents.values()
                   if self.definition_trust(workspace, a) == "unknown")
        return out

    def agent_listing(self, workspace: Path) -> list[AgentDefinitionRow]:
        """Agent definitions with their trust state (``openprogram/agents``, list_agents)."""
        return [AgentDefinitionRow(id=a.id, name=a.name, description=a.description,
                                   source=a.source, scope=a.scope, tools=a.tools,
                                   disallowed_tools=a.disallowed,
                                   trust=self.definition_trust(workspace, a),
                                   model=a.model or None,
                                   permission_mode=a.permission_mode or None)
                for a in self.agents(workspace).values()]

    def config(self, workspace: Path) -> HookConfig:
        """The hooks of a workspace (user files first), re-read when a file changed."""
        return self._config(real_path(workspace))

    def _config(self, real: str) -> HookConfig:
        key = Path(real)
        with self._lock:
            cached = self._configs.get(key)
        if cached is not None and cached[0] == self._stamp(real, cached[1].files):
            return cached[1]
        stamp = self._stamp(real, [])  # before reading: an edit meanwhile re-reads next time
        cfg = load_config(key, user=self.user_files, policies=self.policies,
                          claude=self.claude_dir)
        if cfg.files:
            stamp = (*stamp, *file_stamps(cfg.files))
        for warning in cfg.warnings:
            log.warning("%s", warning)
        with self._lock:
            self._configs[key] = (stamp, cfg)
        return cfg

    def trust_state(self, workspace: Path, spec: HookSpec) -> TrustState:
        """``trusted`` (user-level or approved), ``rejected`` or ``unknown``."""
        return self.definition_trust(workspace, spec)

    def pending(self, workspace: Path) -> list[HookSpec]:
        """Workspace hooks the user has not decided on yet."""
        return [h for h in self.config(workspace).hooks
                if self.trust_state(workspace, h) == "unknown"]

    def listing(self, workspace: Path) -> list[HookListing]:
        """Every hook with its trust state and last result (``openprogram/hooks``)."""
        out = []
        for h in self.config(workspace).hooks:
            state = self.trust_state(workspace, h)
            out.append(HookListing(id=h.id, event=h.event, matcher=h.matcher,
                                   command=h.command, timeout=h.timeout, critical=h.critical,
                                   source=h.source, scope=h.scope, trust=state,
                                   active=state == "trusted", last_result=self.last.get(h.id),
                                   type=h.type, background=h.background))
        return out

    def session_start(self, session_id: str, *, new: bool) -> str | None:
        """SessionStart's source: ``startup`` for a new session, ``resume`` the first time
        this process runs an existing one, else None."""
        with self._lock:
            if session_id in self._seen_sessions:
                return None
            self._seen_sessions.add(session_id)
        return "startup" if new else "resume"

    def transcript(self, path: Path, *, session_id: str, cwd: str,
                   sidechain: bool = False) -> Transcript:
        """The transcript written at ``path``, kept across turns so each hook call serializes
        only the nodes that changed."""
        with self._lock:
            found = self._transcripts.pop(path, None)
            if found is None or found.cwd != cwd:
                found = Transcript(path, session_id=session_id, cwd=cwd, sidechain=sidechain)
            self._transcripts[path] = found  # most recent last
            while len(self._transcripts) > 32:
                self._transcripts.pop(next(iter(self._transcripts)))
            return found

    def remember(self, hooks: TurnHooks) -> None:
        """Keep a session's turn hooks for its SessionEnd (the session's own turns only)."""
        if not hooks.subagent:
            with self._lock:
                self._live.pop(hooks.session_id, None)
                self._live[hooks.session_id] = hooks  # most recent last
                while len(self._live) > MAX_LIVE:  # the longest idle is forgotten, unended
                    self._live.pop(next(iter(self._live)))

    def end_sessions(self, reason: str = "other", session_ids: list[str] | None = None,
                     timeout: float = 30.0) -> None:
        """Run the SessionEnd hooks of sessions this process ran (all, or those named), once
        each; blocking and bounded by each hook's timeout (call off the loop)."""
        with self._lock:
            ids = list(self._live) if session_ids is None else [
                i for i in session_ids if i in self._live]
            ending = [self._live.pop(i) for i in ids]
            for i in ids:
                self._seen_sessions.discard(i)
            idle = [self._idle.pop(i) for i in ids if i in self._idle]
        for loop, handle in idle:  # an ended session waits for nothing
            _cancel(loop, handle)
        for last in ending:
            hooks = replace(last, cancel=None)  # the last turn's cancel is not the session's
            specs = hooks.matching("SessionEnd", subject=reason)
            if not specs:
                continue
            try:  # (an async one too: the session will not have a next turn to wait for)
                runs = hooks.run_all(specs, functools.partial(hooks.payload, reason=reason),
                                     background=False)
            except Exception:
                log.exception("SessionEnd hooks failed")
                continue
            for run in runs:
                decisions.observed(run)
                self.record(run, "ok" if not run.failed else "failed")

    def set_trust(self, workspace: Path, definition_id: str, decision: str) -> str:
        """Trust, reject or forget a workspace definition by id; NotFound for other ids."""
        ids = {h.id for h in self.config(workspace).hooks if h.scope == "workspace"}
        ids |= {a.id for a in self.agents(workspace).values() if a.scope == "workspace"}
        known = set(self.trust.known(workspace))
        if definition_id not in ids and definition_id not in known:
            raise NotFound(f"no workspace hook or agent definition with id {definition_id!r} "
                           "(see openprogram/hooks and openprogram/agents)")
        state = {"trust": "trusted", "reject": "rejected", "forget": "unknown"}[decision]
        self.trust.set(workspace, definition_id, state)  # type: ignore[arg-type]
        return state

    def later(self, session_id: str, note: str) -> None:
        """Keep what an async hook said for the session's next turn (the last MAX_LATER)."""
        with self._lock:
            notes = self._later.setdefault(session_id, [])
            notes.append(note)
            del notes[:-MAX_LATER]
            while len(self._later) > MAX_LIVE:
                self._later.pop(next(iter(self._later)))

    def idle(self, hooks: TurnHooks) -> None:
        """A session's turn ended: unless another starts within ``idle_after`` seconds, its
        Notification hooks get ``idle_prompt`` (on the running loop; none to run: nothing)."""
        self.active(hooks.session_id)
        if not hooks.matching("Notification", subject="idle_prompt"):
            return
        waiting = replace(hooks, cancel=None, halt=None)  # the turn's cancel is not the wait's
        loop = asyncio.get_running_loop()

        def fire() -> None:
            with self._lock:
                self._idle.pop(hooks.session_id, None)
            task = loop.create_task(waiting.observe(
                "Notification", "idle_prompt", notification_type="idle_prompt",
                message="openprogram is waiting for your input", title="Waiting for input"))
            self._idle_tasks.add(task)
            task.add_done_callback(self._idle_tasks.discard)

        with self._lock:
            self._idle[hooks.session_id] = (loop, loop.call_later(self.idle_after, fire))

    def active(self, session_id: str) -> None:
        """A session's turn starts (or it ends): it is not waiting for a prompt."""
        with self._lock:
            found = self._idle.pop(session_id, None)
        if found is not None:
            _cancel(*found)

    def set_command_env(self, session_id: str, env: dict[str, str]) -> None:
        """Keep what a session's SessionStart hooks set for its commands (bounded)."""
        with self._lock:
            self._command_env.pop(session_id, None)
            if env:
                self._command_env[session_id] = env
            while len(self._command_env) > MAX_LIVE:
                self._command_env.pop(next(iter(self._command_env)))

    def command_env(self, session_id: str) -> dict[str, str]:
        """The environment a session's shell commands get from its SessionStart hooks."""
        with self._lock:
            return dict(self._command_env.get(session_id, {}))

    def first_time(self, session_id: str, hook_id: str) -> bool:
        """Whether a ``once`` hook has not run in this session yet (then it counts as run)."""
        with self._lock:
            ran = self._once.setdefault(session_id, set())
            while len(self._once) > MAX_LIVE:
                self._once.pop(next(iter(self._once)))
            if hook_id in ran:
                return False
            ran.add(hook_id)
            return True

    def ran_once(self, session_id: str, hook_id: str) -> bool:
        """Whether a ``once`` hook already ran in this session."""
        with self._lock:
            return hook_id in self._once.get(session_id, ())

    def take_later(self, session_id: str) -> str | None:
        """What async hooks said since the session's last turn began (then forgotten)."""
        with self._lock:
            notes = self._later.pop(session_id, [])
        return "\n".join(notes) or None

    def record(self, run: HookRun, outcome: str) -> None:
        """Remember a hook's last run and what it decided."""
        summary = run.summary(outcome)
        with self._lock:
            self.last[run.hook.id] = summary

    def for_turn(self, *, workspace: Path, session_id: str, turn_id: str, mode: str,
                 transcript_path: str, subagent: bool = False, agent_id: str | None = None,
                 rules: Any = None, cancel: asyncio.Event | None = None,
                 once: frozenset[str] = frozenset(),
                 config: HookConfig | None = None,
                 render_transcript: Callable[[], None] | None = None) -> TurnHooks:
        """The hooks one turn runs: user-level ones and approved (or approved-once) ones (of
        ``config``, the turn's ``Definitions``; default: as they are now)."""
        real = real_path(workspace)
        cfg = config if config is not None else self._config(real)
        active = tuple(h for h in cfg.hooks
                       if self.trust_state(workspace, h) == "trusted" or h.id in once)
        return TurnHooks(engine=self, workspace=Path(real),
                         session_id=session_id,
                         turn_id=turn_id, mode=mode, transcript_path=transcript_path,
                         hooks=active, policies=cfg.policies, rules=rules, subagent=subagent,
                         agent_id=agent_id, cancel=cancel,
                         render_transcript=render_transcript)


def _cancel(loop: asyncio.AbstractEventLoop, handle: asyncio.TimerHandle) -> None:
    """Cancel a timer of ``loop`` from any thread."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        handle.cancel()
    elif not loop.is_closed():
        loop.call_soon_threadsafe(handle.cancel)


@dataclass(frozen=True, slots=True)
class Definitions:
    """A workspace's hooks and agent definitions read once for one turn: the approval asks
    about these, the turn runs these hooks and offers these agents, so an edit made meanwhile
    is neither half-used nor lost (the next turn's stamps see it)."""

    config: HookConfig
    agents: dict[str, AgentDef]


current_hooks: ContextVar[TurnHooks | None] = ContextVar("op_turn_hooks", default=None)


@dataclass(frozen=True, slots=True)
class PreToolVerdict:
    """What the PreToolUse hooks of one tier answered on a call."""

    verdict: str | None  # allow, ask, deny; None: no opinion
    reasons: tuple[str, ...] = ()
    updated_input: dict[str, Any] | None = None  # our arguments
    context: tuple[str, ...] = ()


@dataclass(slots=True)
class TurnHooks:
    """The hooks of one turn and what it needs to run them."""

    engine: HookEngine
    workspace: Path
    session_id: str
    turn_id: str
    mode: str
    transcript_path: str
    hooks: tuple[HookSpec, ...]
    policies: Any
    rules: Any = None
    rules_branch: str | None = None  # the turn's session-rules scope (tools.rules.Rule.branch)
    subagent: bool = False
    agent_id: str | None = None
    cancel: asyncio.Event | None = None
    untested: UntestedEdits = field(default_factory=UntestedEdits)
    stop_hook_active: bool = False
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    render_transcript: Callable[[], None] | None = None  # writes ``transcript_path`` afresh
    start_context: str | None = None  # what SessionStart hooks told the model
    model: HookModel | None = None  # what prompt and agent hooks ask (set once tools are known)
    warnings: list[str] = field(default_factory=list)  # the turn's: shown with its result
    halt: Callable[[], None] | None = None  # ends the turn (from any thread)
    halted: bool = False  # a hook said continue: false (a tool's: the turn ends after it)
    model_name: str = ""  # the turn's model (SessionStart's ``model``)
    env_file: str = ""  # SessionStart's CLAUDE_ENV_FILE (in the session's state folder)
    agent_type: str = ""  # a child turn's agent definition (``general``: none)

    # -- selection and payloads ---------------------------------------------------------------

    def has(self, event: str) -> bool:
        """Whether any active hook listens to an event."""
        return any(h.event == event for h in self.hooks)

    def gates(self, tool: str) -> bool:
        """Whether a PreToolUse hook will run for a call of this tool."""
        return any(h.event == "PreToolUse" and matches_tool(h.matcher, tool)
                   for h in self.hooks)

    def matching(self, event: str, *, tool: str | None = None, subject: str | None = None,
                 arguments: dict[str, Any] | None = None) -> list[HookSpec]:
        """Active hooks of an event whose matcher selects the tool or subject, and whose
        ``if`` holds for the call's ``arguments`` (deduplicated)."""
        seen: set[tuple[Any, ...]] = set()
        out = []
        seen_as: dict[str, Any] | None = None  # the call as hooks see it (worked out once)
        for h in self.hooks:
            if h.event != event:
                continue
            if h.condition:
                if seen_as is None:
                    seen_as = claude_input(tool, arguments or {}, str(self.workspace)) \
                        if tool is not None else {}
                if not holds(h.condition, event, tool, seen_as, str(self.workspace)):
                    continue
            if tool is not None and not matches_tool(h.matcher, tool):
                continue
            if tool is None and subject is not None and not matches(h.matcher, subject):
                continue
            if h.key in seen:  # identical commands run once, as Claude Code
                continue
            if h.once and self.engine.ran_once(self.session_id, h.id):
                continue
            seen.add(h.key)
            out.append(h)
        return out

    def payload(self, spec: HookSpec, **extra: Any) -> dict[str, Any]:
        """The JSON a hook reads on stdin: the common fields and the event's own."""
        out: dict[str, Any] = {
            "session_id": self.session_id, "turn_id": self.turn_id,
            "transcript_path": self.transcript_path, "cwd": str(self.workspace),
            "hook_event_name": spec.event,
            "permission_mode": CLAUDE_MODES.get(self.mode, self.mode),
            "openprogram_permission_mode": self.mode}
        if self.agent_id:
            out["agent_id"] = self.agent_id
        tool = extra.pop("tool_name", None)
        if tool is not None:
            arguments = extra.pop("tool_input", {})
            out["tool_name"] = claude_name(tool)
            out["tool_input"] = claude_input(tool, arguments, str(self.workspace))
            out["openprogram_tool_name"] = tool
            out["openprogram_tool_input"] = arguments
        out.update(extra)
        return out

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def run_one(self, spec: HookSpec, payload: dict[str, Any]) -> HookRun:
        """Run one hook of whichever type (blocking; called off the loop)."""
        if spec.type == "http":
            return run_http(spec, payload, cancelled=self._cancelled)
        if spec.type in ("prompt", "agent"):
            if self.model is None:
                return HookRun(spec, None, "", "", 0.0, error="has no model to ask here")
            return self.model.run(spec, payload, cancelled=self._cancelled)
        return run_hook(spec, payload, self.workspace, cancelled=self._cancelled,
                        env_file=self.env_file if spec.event == "SessionStart" else None)

    def run_all(self, specs: list[HookSpec], make: Callable[[HookSpec], dict[str, Any]], *,
                background: bool = True) -> list[HookRun]:
        """Run hooks in parallel, blocking until each ends, times out or the turn cancels;
        the transcript is rendered first, so a hook reads the branch as it is now. ``async``
        hooks are started and left running (``background=False``: waited for too); they
        answer nothing now, and what they say is kept for the session's next turn."""
        if self.render_transcript is not None:
            try:
                self.render_transcript()
            except Exception:  # a hook without its transcript still runs
                log.warning("the transcript for hooks could not be written", exc_info=True)
        specs = [s for s in specs if not s.once or self.engine.first_time(self.session_id, s.id)]
        if background:
            for spec in (s for s in specs if s.background):
                _BACKGROUND.submit(self._in_background, spec, make(spec))
            specs = [s for s in specs if not s.background]
        if not specs:
            return []
        if len(specs) == 1:
            runs = [self.run_one(specs[0], make(specs[0]))]
        else:
            with ThreadPoolExecutor(max_workers=min(8, len(specs))) as pool:
                futures = [pool.submit(self.run_one, s, make(s)) for s in specs]
                runs = [f.result() for f in futures]
        for run in runs:
            self._common(run)
        return runs

    def _common(self, run: HookRun) -> None:
        """The answer fields every event shares: ``systemMessage`` is shown to the user (the
        turn's warnings); ``continue: false`` ends the turn after the hook, its ``stopReason``
        shown (a prompt it blocks, a Stop hook it lets stop: those events' own readings)."""
        out = run.json_output()
        if out is None:
            return
        event = run.hook.event
        message = out.get("systemMessage")
        if isinstance(message, str) and message.strip():
            self.warnings.append(f"{event} hook: {message.strip()}")
        if out.get("continue") is False and event in decisions.HALTING:
            reason = out.get("stopReason")
            why = reason.strip() if isinstance(reason, str) and reason.strip() else \
                "no reason given"
            self.warnings.append(f"a {event} hook ended the turn: {why}")
            self.halted = True
            if event not in _CALL_EVENTS and self.halt is not None:
                self.halt()  # (a tool call's hooks: the runner ends the turn after the call)

    def _in_background(self, spec: HookSpec, payload: dict[str, Any]) -> None:
        """An async hook's run: never cancelled with the turn; its ``systemMessage`` or
        ``additionalContext`` reaches the model with the session's next prompt."""
        try:
            run = run_hook(spec, payload, self.workspace)
        except Exception:
            log.exception("an async hook failed")
            return
        note = decisions.later(run)
        if note:
            self.engine.later(self.session_id, f"[async {spec.event} hook] {note}")
        self.engine.record(run, "failed" if run.failed else "ok")  # (after: it is kept)

    # -- the gate (synchronous, called from GateRegistry.decide) -----------------------------

    def pre_tool(self, payload: dict[str, Any], *, critical: bool) -> PreToolVerdict | None:
        """PreToolUse hooks of one tier on a ``tool.before`` payload: their merged answer
        (deny > ask > allow > no opinion), the rewritten input in our arguments, context."""
        name = str(payload.get("name", ""))
        arguments = payload.get("input") or {}
        specs = [h for h in self.matching("PreToolUse", tool=name, arguments=arguments)
                 if h.critical == critical]
        if not specs:
            return None
        runs = self.run_all(specs, lambda s: self.payload(
            s, tool_name=name, tool_input=arguments, tool_use_id=payload.get("tool_call_id")))
        rank = {"allow": 0, "ask": 1, "deny": 2}
        verdict: str | None = None
        reasons: list[str] = []
        rewrites: list[dict[str, Any]] = []
        context: list[str] = []
        for run in runs:
            answer = decisions.pre_tool(run)
            self.engine.record(run, answer.verdict or (
                "rewrite" if answer.updated_input is not None else "no decision"))
            if answer.context:
                context.append(answer.context)
            if answer.updated_input is not None:
                ours = our_input(name, answer.updated_input, arguments, str(self.workspace))
                if ours not in rewrites:
                    rewrites.append(ours)
            if answer.verdict is None:
                continue
            if verdict is None or rank[answer.verdict] > rank[verdict]:
                verdict = answer.verdict
            if answer.reason and (answer.verdict != "allow" or len(runs) == 1):
                reasons.append(answer.reason)
        if len(rewrites) > 1:
            return PreToolVerdict("deny", (*reasons, "PreToolUse hooks rewrote the call in "
                                           "different ways"), context=tuple(context))
        return PreToolVerdict(verdict, tuple(reasons), rewrites[0] if rewrites else None,
                              tuple(context))

    # -- the other events (awaited from the turn, run off the loop) -----------------------

    async def post_tool(self, name: str, arguments: dict[str, Any], tool_use_id: str,
                        output: str, ok: bool, *, mcp: bool = False
                        ) -> tuple[str | None, str | None]:
        """PostToolUse after a successful call (PostToolUseFailure after a failed one):
        feedback for the model, and an MCP tool's replaced output (the last hook's)."""
        self.untested.saw(name, arguments, ok)
        event = "PostToolUse" if ok else "PostToolUseFailure"
        specs = self.matching(event, tool=name, arguments=arguments)
        if not specs:
            return None, None
        if ok:
            response = claude_response(name, output, ok, arguments, str(self.workspace))
            extra: dict[str, Any] = {"tool_response": response}
        else:
            extra = {"error": output, "is_interrupt": "[killed after" in output}
        runs = await asyncio.to_thread(self.run_all, specs, lambda s: self.payload(
            s, tool_name=name, tool_input=arguments, tool_use_id=tool_use_id, **extra))
        notes = []
        replaced: str | None = None
        for run in runs:
            note = decisions.feedback(run)
            self.engine.record(run, "feedback" if note else "ok")
            if note:
                notes.append(note)
            if ok and mcp:
                replaced = decisions.replaced_output(run) or replaced
        return "\n".join(notes) or None, replaced

    async def permission_request(self, name: str, arguments: dict[str, Any],
                                 tool_use_id: str) -> decisions.PermissionAnswer | None:
        """PermissionRequest, as the user is about to be asked: the hooks' answer for the
        user (deny wins; an allow's ``updatedInput`` in our arguments; two allows rewriting
        differently are a denial), or None to ask the user."""
        specs = self.matching("PermissionRequest", tool=name, arguments=arguments)
        if not specs:
            return None
        runs = await asyncio.to_thread(self.run_all, specs, lambda s: self.payload(
            s, tool_name=name, tool_input=arguments, tool_use_id=tool_use_id,
            permission_suggestions=[]))
        answers: list[decisions.PermissionAnswer] = []
        for run in runs:
            answer = decisions.permission(run)
            self.engine.record(run, answer.behavior if answer else "no decision")
            if answer is None:
                continue
            if answer.updated_input is not None:
                answer = replace(answer, updated_input=our_input(
                    name, answer.updated_input, arguments, str(self.workspace)))
            answers.append(answer)
        denied = [a for a in answers if a.behavior == "deny"]
        if denied:
            return denied[0]
        rewrites = {json.dumps(a.updated_input, sort_keys=True, default=str)
                    for a in answers if a.updated_input is not None}
        if len(rewrites) > 1:
            return decisions.PermissionAnswer("deny", "PermissionRequest hooks rewrote the "
                                                      "call in different ways")
        rewritten = [a for a in answers if a.updated_input is not None]
        return rewritten[0] if rewritten else (answers[0] if answers else None)

    async def session_start(self, source: str) -> str | None:
        """SessionStart (``startup``, ``resume``, ``compact``): context for the model from
        the hooks' stdout or ``additionalContext``, as in Claude Code."""
        specs = self.matching("SessionStart", subject=source)
        if not specs:
            return None
        if self.env_file:  # what this session's hooks write there is read afresh
            Path(self.env_file).parent.mkdir(parents=True, exist_ok=True)
            Path(self.env_file).write_bytes(b"")
        runs = await asyncio.to_thread(self.run_all, specs, lambda s: self.payload(
            s, source=source, model=self.model_name))
        if self.env_file:
            found = await asyncio.to_thread(sourced_env, Path(self.env_file))
            self.engine.set_command_env(self.session_id, found)
        context = []
        for run in runs:
            note = decisions.context(run)
            self.engine.record(run, "failed" if run.failed else "ok")
            if note:
                context.append(note)
        return "\n".join(context) or None

    async def user_prompt(self, text: str) -> decisions.PromptAnswer:
        """UserPromptSubmit: blocked (with the reason) or extra context for the model."""
        specs = self.matching("UserPromptSubmit")
        if not specs:
            return decisions.PromptAnswer()
        runs = await asyncio.to_thread(self.run_all, specs,
                                       lambda s: self.payload(s, prompt=text))
        blocked, context = [], []
        for run in runs:
            answer = decisions.prompt(run)
            self.engine.record(run, "blocked" if answer.blocked else "ok")
            if answer.blocked:
                blocked.append(answer.blocked)
            if answer.context:
                context.append(answer.context)
        return decisions.PromptAnswer(blocked="; ".join(blocked) or None,
                                      context="\n".join(context) or None)

    async def stop(self, last_text: str) -> str | None:
        """Stop (SubagentStop in a child): a reason to keep going, or None to stop."""
        event = "SubagentStop" if self.subagent else "Stop"
        specs = self.matching(event)
        if not specs:
            return None
        active = self.stop_hook_active
        extra: dict[str, Any] = {}
        if self.subagent:
            extra = {"agent_id": self.agent_id or self.turn_id,
                     "agent_type": self.agent_type or "general",
                     "agent_transcript_path": self.transcript_path}
        runs = await asyncio.to_thread(self.run_all, specs, lambda s: self.payload(
            s, stop_hook_active=active, last_assistant_message=last_text, **extra))
        reasons = []
        for run in runs:
            reason = decisions.stop(run)
            self.engine.record(run, "continue" if reason else "ok")
            if reason:
                reasons.append(reason)
        if reasons:
            self.stop_hook_active = True
        return "\n".join(reasons) or None

    def notify(self, event: str, subject: str | None = None, **extra: Any) -> None:
        """Run an observer event's hooks in the background (nothing to do when none match)."""
        if not self.matching(event, subject=subject):
            return
        task = asyncio.get_running_loop().create_task(self.observe(event, subject, **extra))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def drain(self, timeout: float) -> None:
        """Wait a bounded time for background observers (end of turn)."""
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=timeout)

    async def observe(self, event: str, subject: str | None = None, **extra: Any) -> None:
        """Run an observer event's hooks; never raises (failures are logged)."""
        specs = self.matching(event, subject=subject)
        if not specs:
            return
        try:
            runs = await asyncio.to_thread(self.run_all, specs,
                                           lambda s: self.payload(s, **extra))
        except Exception:
            log.exception("%s hooks failed", event)
            return
        for run in runs:
            decisions.observed(run)
            self.engine.record(run, "ok" if not run.failed else "failed")
