"""``openprogram-lsp chat``: one turn on the terminal, streamed."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from openprogram_lsp.agent.prompts import NO_APPROVER
from openprogram_lsp.core.types import INHERIT, TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event
from openprogram_lsp.terminal.errors import EXIT_INTERRUPTED, CliError, report

if TYPE_CHECKING:
    from openprogram_lsp.config import Settings
    from openprogram_lsp.providers.base import Provider


class Printer:
    """Turns bus events into terminal output (or JSON lines) and notes refused calls."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.unapproved = 0
        self.thinking = False  # a thought is being printed
        self.out = sys.stdout
        self._wire: Callable[[Event], dict[str, Any]] | None = None
        if as_json:  # the wire's spelling, loaded only for --json (the LSP's models)
            from openprogram_lsp.lsp.dumps import notification

            self._wire = notification

    def __call__(self, ev: Event) -> None:
        if ev.type == "tool.finished" and str(ev.payload.get("output", "")).startswith(
                NO_APPROVER[:40]):
            self.unapproved += 1
        if self._wire is not None:
            self.out.write(json.dumps(self._wire(ev), default=str) + "\n")
            self.out.flush()
            return
        err = sys.stderr
        if ev.type == "model.response_started" and ev.payload.get("step"):
            self.out.write("\n\n")
        elif ev.type == "text.delta":
            self.thinking = False
            self.out.write(str(ev.payload.get("text", "")))
            self.out.flush()
        elif ev.type == "thought.delta":  # the model's reasoning: on stderr, never the reply
            if not self.thinking:
                err.write("\n✻ ")
                self.thinking = True
            err.write(str(ev.payload.get("text", "")).replace("\n", "\n  "))
            err.flush()
        elif ev.type == "tool.started":
            self.thinking = False
            err.write(f"\n⏺ {ev.payload.get('title')} [{ev.payload.get('kind')}]\n")
        elif ev.type == "tool.finished":
            status = ev.payload.get("status")
            first = str(ev.payload.get("output", "")).strip().splitlines()[:1]
            err.write(f"  ⎿ {status}: {first[0][:200] if first else ''}\n")
        elif ev.type == "context.compacted":
            err.write(f"\n[{compacted_line(ev.payload)}]\n")
        elif ev.type == "checkpoint.created":
            err.write(f"\n[checkpoint {ev.payload.get('id')}]\n")


def compacted_line(p: dict[str, Any]) -> str:
    """``context compacted (summarised): 5,210 -> 1,830 tokens of 16,000; 12 messages
    summarised, 3 snipped`` from a ``context.compacted`` payload."""
    def num(key: str) -> str:
        value = p.get(key)
        return f"{value:,}" if isinstance(value, int) else "?"

    counts = [f"{p[k]} messages {k}" for k in ("summarised", "snipped", "replaced")
              if isinstance(p.get(k), int) and p[k]]
    line = (f"context compacted ({p.get('path', '?')}): {num('tokens_before')} -> "
            f"{num('tokens_after')} tokens of {num('context_window')}")
    if counts:
        line += "; " + ", ".join(counts)
    if p.get("summarizer_error"):
        line += f"; the summary failed: {p['summarizer_error']}"
    return line


def turn_request(args: argparse.Namespace, *, workspace: str, model: str | None,
                 mode: str) -> TurnRequest:
    """The request a chat command sends; CliError for a message-less or session-less call."""
    text = "/compact" if args.compact else " ".join(args.text)
    if args.compact and not args.session:
        raise CliError("chat --compact needs --session SID (the session to compact)",
                       "'openprogram-lsp sessions' lists them")
    if not text.strip():
        raise CliError("chat needs a message", "openprogram-lsp chat \"list src\" (or --compact)")
    if getattr(args, "code", False) and (not args.branch_from or args.branch_from == "root"):
        raise CliError("chat --code needs --branch-from NODE (the message whose code to go "
                       "back to)", "'openprogram-lsp history SID' lists the node ids")
    branch: Any = INHERIT
    if args.branch_from:
        branch = None if args.branch_from == "root" else args.branch_from
    return TurnRequest(text=text, session_id=args.session, branch_from=branch, model=model,
                       workspace=workspace, source="cli",
                       permission_mode=mode)  # type: ignore[arg-type]


def attach_images(dispatcher: Dispatcher, req: TurnRequest, files: list[Path],
                  workspace: Path) -> None:
    """``chat --image FILE``: each image stored by content and attached to the message as the
    editors attach one; CliError (one line) for a file that is not a usable image."""
    from openprogram_lsp.core.images import MAX_IMAGE_BYTES, ImageError, downscaled_note

    entries: list[dict[str, Any]] = []
    for file in files:
        try:
            with open(file, "rb") as fh:
                data = fh.read(MAX_IMAGE_BYTES + 1)
            if len(data) > MAX_IMAGE_BYTES:
                raise ImageError(f"the image is over {MAX_IMAGE_BYTES // (1024 * 1024)} MB")
            part = dispatcher.services.store.images.put(data, file.name)
        except OSError as exc:
            raise CliError(f"--image {file}: {exc.strerror or exc}") from None
        except ImageError as exc:
            raise CliError(f"--image {file}: {exc.message}") from None
        note = downscaled_note(part)
        if note:
            sys.stderr.write(f"openprogram-lsp: {note}\n")
        real = file.resolve()
        inside = real.is_relative_to(workspace.resolve())
        entries.append({"kind": "image", "uri": real.as_uri(),
                        "path": real.relative_to(workspace.resolve()).as_posix() if inside
                        else str(real), **part.wire()})
    if entries:
        req.metadata = {**req.metadata, "context": [*req.metadata.get("context", []),
                                                    *entries]}


def last_session(home: Path, session: str | None, workspace: Path | None) -> str:
    """``--continue``: the most recently updated session of the workspace (--workspace, else
    the current directory); CliError when there is none or --session is given too."""
    from openprogram_lsp.terminal.workspaces import existing_workspace, known_sessions

    if session:
        raise CliError("chat takes --continue or --session SID, not both")
    where = existing_workspace(workspace) if workspace is not None else Path.cwd().resolve()
    for sid, ws in known_sessions(home):
        if ws == where:
            return sid
    raise CliError(f"no session to continue in {where}",
                   "start one with 'openprogram-lsp chat \"...\"', or list them with "
                   "'openprogram-lsp sessions'")


def preflight_model(dispatcher: Dispatcher, spec: str, settings: Settings) -> None:
    """Build the turn's model before anything is stored: a missing key or script file is one
    line and leaves no session behind. The turn then takes this provider (built once: an
    ``api_key_command`` runs once)."""
    from openprogram_lsp.providers.factory import make_provider

    services = dispatcher.services
    built: list[Provider] = [make_provider(spec, settings=settings)]  # ConfigError: no session
    later = services.provider_factory

    def first_is_built(asked: str, turn: Settings | None) -> Provider:
        if built and asked == spec:
            return built.pop()
        return later(asked, turn)

    services.provider_factory = first_is_built


def fork_code(dispatcher: Dispatcher, workspace: Path, sid: str | None,
              node: str | None) -> None:
    """``--branch-from NODE --code``: bring the workspace to NODE's code first (undoable),
    by the rule of ``openprogram/fork`` with ``restoreCode``."""
    from openprogram_lsp.store import branch_code
    from openprogram_lsp.store.checkpoints import CheckpointStore

    if not sid or not node:
        raise CliError("chat --code needs --session SID and --branch-from NODE")
    sessions = dispatcher.services.store
    if not sessions.exists(sid):
        raise CliError(f"unknown session id {sid!r}", "'openprogram-lsp sessions' lists them")
    if not sessions.has_node(sid, node):
        raise CliError(f"no node {node!r} in session {sid}",
                       f"'openprogram-lsp history {sid}' lists them")
    store = dispatcher.checkpointer(workspace)
    if not isinstance(store, CheckpointStore):
        raise CliError("checkpoints are not available for this session's workspace")
    out = branch_code.switch_code(sessions, store, sid, node)
    for path in out.restored:
        sys.stderr.write(f"  restored {path}\n")
    for path in out.conflicts or []:
        sys.stderr.write(f"  kept {path} (changed by another process during the switch)\n")
    if out.safety_checkpoint_id:
        sys.stderr.write(f"[code as at {node}; undo: openprogram-lsp restore "
                         f"{out.safety_checkpoint_id[:12]}]\n")


@contextmanager
def sigterm_as_interrupt(cancel: Callable[[], None]) -> Iterator[None]:
    """SIGTERM during a turn ends it as Ctrl-C does (cancelled, the partial reply kept).

    The signal runs SIGINT's handler (the turn's Ctrl-C handling); where SIGINT is ignored (a
    background job of a non-interactive shell starts so, and a SIGINT sent to ourselves would
    be lost) it calls ``cancel``."""

    def on_term(signum: int, frame: FrameType | None) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            cancel()

    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            yield
            return
        previous = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_chat(dispatcher: Dispatcher, req: TurnRequest, as_json: bool) -> int:
    """Run the turn, wait for background agents, print the result; the exit code."""
    printer = Printer(as_json)
    unsubscribe: list[Callable[[], None]] = []
    sessions: list[str] = []

    def follow(sid: str) -> None:  # the session's events from its first one until the end,
        # children's included (one that starts as the turn ends must not fall in a gap)
        sessions.append(sid)
        unsubscribe.append(dispatcher.services.bus.subscribe(
            lambda ev: printer(ev) if ev.session_id == sid else None))

    dispatcher.defer_checkpoints = False  # the process ends with the turn: commit it now
    try:
        with sigterm_as_interrupt(lambda: _cancel(dispatcher, sessions)):
            result = dispatcher.process_user_turn(req, on_session=follow)
            _wait_for_agents(dispatcher, result.session_id)
            if dispatcher.services.hooks is not None:  # the chat's session ends with it
                dispatcher.services.hooks.end_sessions("prompt_input_exit")
    finally:
        for stop in unsubscribe:
            stop()
    if as_json:
        sys.stdout.write(json.dumps({"type": "result", "data": result.wire()}) + "\n")
    else:
        sys.stdout.write("\n")
        sys.stderr.write(f"[session {result.session_id} · {result.status}]\n")
    if result.status == "cancelled":
        sys.stderr.write("openprogram-lsp: interrupted (the turn was cancelled; its partial "
                         "reply is kept)\n")
        return EXIT_INTERRUPTED
    if result.error:
        report(result.error.message)
        return 1
    if result.status in ("truncated", "refused"):  # the warning says why and what to do
        report(next(iter(result.warnings or []), f"the reply ended {result.status}"))
        return 1
    if printer.unapproved:
        report(f"{printer.unapproved} tool call(s) needed approval and there is no terminal "
               "to ask on", "rerun with --permission-mode accept-edits (edits) or bypass "
               "(everything), or from a terminal")
        return 3
    return 0 if result.status == "done" else 1


def _cancel(dispatcher: Dispatcher, sessions: list[str]) -> None:
    for sid in sessions:
        dispatcher.cancel(sid)


def _wait_for_agents(dispatcher: Dispatcher, sid: str) -> None:
    """A one-shot chat waits for the children and replies it started (Ctrl-C cancels them)."""
    agents = dispatcher.agents
    if not agents.busy():
        return
    sys.stderr.write("\n[waiting for background agents; Ctrl-C cancels them]\n")
    try:
        while not agents.wait_idle(0.5):
            pass
    except KeyboardInterrupt:
        dispatcher.cancel(sid)
        agents.wait_idle(10)
