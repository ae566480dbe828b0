"""The command line: ``serve`` (default), ``chat``, ``sessions``, ``history`` and checkpoints."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openprogram_lsp import __version__
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.config import Settings, load_settings, user_config_path
from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.core.secrets import conceal_from_proc
from openprogram_lsp.core.types import (
    INHERIT,
    PermissionOutcome,
    PermissionRequest,
    Question,
    TurnRequest,
)
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.events.bus import Event


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workspace", type=Path, default=None, help="workspace root (default: cwd)")
    p.add_argument("--home", type=Path, default=None, help="state root ($OPENPROGRAM_HOME)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(prog="openprogram-lsp",
                                     description="An AI coding agent inside a language server.")
    parser.add_argument("--version", action="version", version=f"openprogram-lsp {__version__}")
    sub = parser.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="run the language server (default)")
    serve.add_argument("--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT")
    serve.add_argument("--host", default="127.0.0.1", help=argparse.SUPPRESS)
    serve.add_argument("--model", default=None)
    serve.add_argument("--permission-mode", default=None)
    serve.add_argument("--log-file", type=Path, default=None)
    _add_common(serve)

    acp = sub.add_parser("acp", help="run as an Agent Client Protocol agent on stdio")
    acp.add_argument("--model", default=None)
    acp.add_argument("--permission-mode", default=None)
    acp.add_argument("--log-file", type=Path, default=None)
    _add_common(acp)

    chat = sub.add_parser("chat", help="run one turn from the command line")
    chat.add_argument("text", nargs="*", help="the message (not needed with --compact)")
    chat.add_argument("--session", default=None, help="continue this session")
    chat.add_argument("--branch-from", default=None,
                      help="fork from this node id ('root' for a new root)")
    chat.add_argument("--model", default=None, help="offline, scripted:FILE, openai:M, "
                                                     "anthropic:M")
    chat.add_argument("--permission-mode", default=None,
                      help="ask (default), accept-edits, plan or bypass")
    chat.add_argument("--json", action="store_true", help="print events as JSON lines")
    chat.add_argument("--compact", action="store_true", help="compact the session's context")
    _add_common(chat)

    sessions = sub.add_parser("sessions", help="list sessions")
    sessions.add_argument("--json", action="store_true")
    _add_common(sessions)

    history = sub.add_parser("history", help="show a session's active branch")
    history.add_argument("session")
    history.add_argument("--head", default=None, help="show the branch ending at this node")
    history.add_argument("--json", action="store_true")
    _add_common(history)

    cps = sub.add_parser("checkpoints", help="list checkpoints of the workspace")
    cps.add_argument("--session", default=None)
    cps.add_argument("--json", action="store_true")
    _add_common(cps)

    diff = sub.add_parser("diff", help="show a checkpoint's diff")
    diff.add_argument("checkpoint")
    diff.add_argument("path", nargs="?")
    _add_common(diff)

    restore = sub.add_parser("restore", help="restore a checkpoint (undoable)")
    restore.add_argument("checkpoint")
    restore.add_argument("paths", nargs="*")
    _add_common(restore)

    hooks = sub.add_parser("hooks", help="list hooks and agent definitions; trust or revoke "
                                         "a workspace's")
    decide = hooks.add_mutually_exclusive_group()
    decide.add_argument("--trust", metavar="ID", help="trust a workspace hook or agent definition")
    decide.add_argument("--reject", metavar="ID", help="refuse it for good")
    decide.add_argument("--revoke", metavar="ID", help="forget the decision (asked again)")
    hooks.add_argument("--json", action="store_true")
    _add_common(hooks)

    schema = sub.add_parser("schema", help="print the JSON Schema of the protocol")
    del schema

    config = sub.add_parser("config", help="print the effective settings and their sources",
                            description="Print every setting, its value and where it came "
                                        "from (default, a config file, a variable or a flag).")
    config.add_argument("--json", action="store_true")
    config.add_argument("--model", default=None, help=argparse.SUPPRESS)
    config.add_argument("--permission-mode", default=None, help=argparse.SUPPRESS)
    _add_common(config)

    box = sub.add_parser("sandbox", help="say whether commands run in the sandbox (exit 1: not)")
    box.add_argument("--json", action="store_true")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    """Config files, environment and this command's flags, validated together."""
    workspace = getattr(args, "workspace", None)
    home = getattr(args, "home", None)
    flags = {"model": (getattr(args, "model", None), "flag --model"),
             "permission_mode": (getattr(args, "permission_mode", None),
                                 "flag --permission-mode"),
             "home": (home.expanduser().resolve() if home else None, "flag --home")}
    return load_settings(workspace=(workspace or Path.cwd()).resolve(), flags=flags)


def _config(args: argparse.Namespace) -> AppConfig:
    settings = _settings(args)
    assert settings.workspace is not None
    return AppConfig.from_settings(settings, settings.workspace)


class TerminalApprover:
    """Asks approvals on the terminal."""

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        call = request.tool_call
        lines = [f"\n? {call.title}  [{call.kind}]"]
        if call.diff is not None:
            lines.append(_short_diff(call.diff.path, call.diff.old_text, call.diff.new_text))
        lines.append("  [y] allow once  [a] always allow  [n] reject  [r] always reject: ")
        answer = (await asyncio.to_thread(input, "\n".join(lines))).strip().lower()
        kind = {"y": "allow_once", "a": "allow_always", "r": "reject_always"}.get(
            answer[:1], "reject_once")
        return PermissionOutcome(outcome="selected", option_id=kind, kind=kind)  # type: ignore[arg-type]


class TerminalAsker:
    """Asks agent questions on the terminal."""

    async def ask(self, question: Question) -> str | None:
        prompt = f"\n? {question.question}"
        if question.options:
            prompt += "".join(f"\n  {i}. {o}" for i, o in enumerate(question.options, 1))
        answer = (await asyncio.to_thread(input, prompt + "\n> ")).strip()
        if question.options and answer.isdigit() and 0 < int(answer) <= len(question.options):
            return question.options[int(answer) - 1]
        return answer or None


class NoTerminalAsker:
    """Declines questions when there is no terminal to ask on."""

    async def ask(self, question: Question) -> str | None:
        return None


def _short_diff(path: str, old: str, new: str) -> str:
    import difflib

    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}",
                                     f"b/{path}", lineterm="", n=1))
    shown = diff[:40] + ([f"… {len(diff) - 40} more lines"] if len(diff) > 40 else [])
    return "\n".join("  " + ln for ln in shown)


def _wait_for_agents(dispatcher: Dispatcher, sid: str,
                     on_event: Callable[[Event], None]) -> None:
    """A one-shot chat waits for the children and replies it started (Ctrl-C cancels them)."""
    runner = dispatcher.agents.runner
    if not any(not job.done for job in runner.jobs()):
        return
    sys.stderr.write("\n[waiting for background agents; Ctrl-C cancels them]\n")
    unsubscribe = dispatcher.services.bus.subscribe(
        lambda ev: on_event(ev) if ev.session_id == sid else None)
    try:
        while not runner.wait_idle(0.5):
            pass
    except KeyboardInterrupt:
        dispatcher.cancel(sid)
        runner.wait_idle(10)
    finally:
        unsubscribe()


def cmd_chat(args: argparse.Namespace) -> int:
    """Run one turn, streaming its events."""
    cfg = _config(args)
    tty = sys.stdin.isatty()
    dispatcher = build_dispatcher(cfg, approver=TerminalApprover() if tty else None,
                                  asker=TerminalAsker() if tty else NoTerminalAsker())
    text = " ".join(args.text)
    if args.compact:
        text = "/compact"
    if not text.strip():
        sys.stderr.write("error: chat needs a message (or --compact)\n")
        return 2
    branch: Any = INHERIT
    if args.branch_from:
        branch = None if args.branch_from == "root" else args.branch_from
    req = TurnRequest(text=text, session_id=args.session, branch_from=branch, model=cfg.model,
                      workspace=str(cfg.workspace), source="cli",
                      permission_mode=cfg.permission_mode)
    out = sys.stdout

    def on_event(ev: Event) -> None:
        if args.json:
            out.write(json.dumps(ev.wire(), default=str) + "\n")
            out.flush()
            return
        if ev.type == "model.response_started" and ev.payload.get("step"):
            out.write("\n\n")
        elif ev.type == "text.delta":
            out.write(str(ev.payload.get("text", "")))
            out.flush()
        elif ev.type == "tool.started":
            sys.stderr.write(f"\n⏺ {ev.payload.get('title')} [{ev.payload.get('kind')}]\n")
        elif ev.type == "tool.finished":
            status = ev.payload.get("status")
            first = str(ev.payload.get("output", "")).strip().splitlines()[:1]
            sys.stderr.write(f"  ⎿ {status}: {first[0][:200] if first else ''}\n")
        elif ev.type == "context.compacted":
            sys.stderr.write(f"\n[context compacted: {ev.payload}]\n")
        elif ev.type == "checkpoint.created":
            sys.stderr.write(f"\n[checkpoint {ev.payload.get('id')}]\n")

    try:
        result = dispatcher.process_user_turn(req, on_event=on_event)
    except OpenProgramError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        return 2
    _wait_for_agents(dispatcher, result.session_id, on_event)
    if args.json:
        out.write(json.dumps({"type": "result", "data": result.wire()}) + "\n")
    else:
        out.write("\n")
        sys.stderr.write(f"[session {result.session_id} · {result.status}]\n")
        if result.error:
            sys.stderr.write(f"error: {result.error.message}\n")
    return 0 if result.status == "done" else 1


def cmd_sessions(args: argparse.Namespace) -> int:
    """List sessions."""
    dispatcher = build_dispatcher(_config(args))
    rows = dispatcher.services.store.list_sessions()
    if args.json:
        print(json.dumps([{k: r.get(k) for k in ("id", "title", "headId", "status",
                                                  "updatedAt")} for r in rows]))
        return 0
    for r in rows:
        print(f"{r['id']}  {r.get('updatedAt', '')}  {r.get('title') or '(untitled)'}")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """Print a session's branch root to head."""
    dispatcher = build_dispatcher(_config(args))
    nodes = dispatcher.services.store.get_branch(args.session, args.head)
    if args.json:
        print(json.dumps([n.wire() for n in nodes]))
        return 0
    for n in nodes:
        status = f" ({n.status})" if n.status and n.status != "done" else ""
        print(f"── {n.role} {n.id}{status}")
        for call in n.tool_calls or []:
            print(f"   ⏺ {call.title or call.name} [{call.kind}] {call.status}")
        ctx = n.metadata.get("context")
        if isinstance(ctx, dict):  # what the model saw (the turn's ContextCommit, in short)
            print(f"   ⎘ context {ctx.get('path')}: {ctx.get('estimate')}/"
                  f"{ctx.get('contextWindow')} tokens est., kept {ctx.get('kept')}, snipped "
                  f"{ctx.get('snipped')}, summarised {ctx.get('summarised')}, replaced "
                  f"{ctx.get('replaced')}")
        if n.text:
            print(n.text)
    return 0


def cmd_checkpoints(args: argparse.Namespace) -> int:
    """List, diff or restore checkpoints."""
    cfg = _config(args)
    dispatcher = build_dispatcher(cfg)
    cp = dispatcher.checkpointer(cfg.workspace)
    if cp is None:
        sys.stderr.write("error: checkpoints are not available\n")
        return 2
    api: Any = cp
    if args.command == "checkpoints":
        items = api.list(session_id=args.session)
        if args.json:
            print(json.dumps([c.wire() for c in items]))
        for c in items if not args.json else []:
            files = ", ".join(f"{f.status[0].upper()} {f.path}" for f in c.files[:6])
            print(f"{c.id[:12]}  {c.created_at}  {c.kind:<8} {c.message.splitlines()[0][:50]}"
                  f"  {files}")
        return 0
    if args.command == "diff":
        print(api.diff(args.checkpoint, args.path)["diff"], end="")
        return 0
    res = api.restore(args.checkpoint, args.paths or None)
    print(f"restored {len(res['restored'])} file(s); undo with: openprogram-lsp restore "
          f"{res['safetyCheckpointId']}")
    return 0


def cmd_hooks(args: argparse.Namespace) -> int:
    """List hooks and agent definitions with their trust; trust, reject or revoke one."""
    from openprogram_lsp.hooks.engine import HookEngine

    cfg = _config(args)
    engine = HookEngine(cfg.home)
    ws = cfg.workspace.resolve()
    for decision, ident in (("trust", args.trust), ("reject", args.reject),
                            ("forget", args.revoke)):
        if ident:
            state = engine.set_trust(ws, ident, decision)
            print(f"{ident}: {state}")
            return 0
    hooks, agents = engine.listing(ws), engine.agent_listing(ws)
    if args.json:
        print(json.dumps({"hooks": hooks, "agents": agents,
                          "warnings": engine.config(ws).warnings}))
        return 0
    for h in hooks:
        matcher = f"({h['matcher']})" if h["matcher"] else ""
        flags = " critical" if h["critical"] else ""
        print(f"{h['id']}  {h['trust']:<8} {h['event']}{matcher}{flags}  {h['command']}  "
              f"[{h['source']}]")
    for a in agents:
        print(f"{a['id']}  {a['trust']:<8} agent {a['name']}: {a['description']}  "
              f"[{a['source']}]")
    for w in engine.config(ws).warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not hooks and not agents:
        print("no hooks or agent definitions apply to this workspace")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the language server."""
    from openprogram_lsp.lsp.server import serve

    return serve(args, build=lambda: build_dispatcher(_config(args)))


def cmd_acp(args: argparse.Namespace) -> int:
    """Run the ACP agent on stdio."""
    from openprogram_lsp.acp.stdio import claim_stdout

    frames = claim_stdout()  # before anything else can write to stdout
    from openprogram_lsp.acp.server import serve
    from openprogram_lsp.tools.mcp.sources import McpToolSources

    dispatcher = build_dispatcher(_config(args))
    hub = dispatcher.services.mcp
    return serve(args, frames, build=lambda: dispatcher,
                 tool_sources=lambda: McpToolSources(hub) if hub is not None else None)


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the protocol's JSON Schema."""
    from openprogram_lsp.lsp.schema import protocol_json_schema

    print(json.dumps(protocol_json_schema(), indent=2))
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    """Print the effective settings and where each came from."""
    settings = _settings(args)
    rows = settings.rows()
    if args.json:
        print(json.dumps({"files": [str(f) for f in settings.files],
                          "workspace": str(settings.workspace), "trusted": settings.trusted,
                          "settings": [{"key": k, "value": v, "source": s}
                                       for k, v, s in rows]}))
        return 0
    import os

    user = user_config_path(os.environ)
    ws_file = settings.workspace / ".openprogram" / "config.toml" if settings.workspace else None
    print(f"# user config:      {user}{'' if user in settings.files else ' (not present)'}")
    if ws_file is not None:
        state = "" if ws_file in settings.files else " (not present)"
        trust = " (trusted)" if settings.trusted else ""
        print(f"# workspace config: {ws_file}{state}{trust}")
    width = max(len(k) for k, _, _ in rows)
    vwidth = min(40, max(len(v) for _, v, _ in rows))
    for key, value, source in rows:
        print(f"{key:<{width}}  {value:<{vwidth}}  {source}")
    return 0


def cmd_sandbox(args: argparse.Namespace) -> int:
    """Print whether ``run_command`` will be sandboxed here, and why not."""
    from openprogram_lsp.tools.sandbox import status

    info = status()
    print(json.dumps(info) if args.json else info["message"])
    return 0 if info["sandboxed"] or info["mode"] == "off" else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``openprogram-lsp`` command."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv = ["serve", *argv]
    args = parser.parse_args(argv)
    conceal_from_proc()  # commands must not read the provider keys from /proc/<our pid>
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    handlers = {"chat": cmd_chat, "sessions": cmd_sessions, "history": cmd_history,
                "checkpoints": cmd_checkpoints, "diff": cmd_checkpoints,
                "restore": cmd_checkpoints, "serve": cmd_serve, "schema": cmd_schema,
                "acp": cmd_acp, "config": cmd_config, "sandbox": cmd_sandbox,
                "hooks": cmd_hooks}
    try:
        return handlers[args.command](args)
    except OpenProgramError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
