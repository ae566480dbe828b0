"""The command line: ``serve``, ``chat``, ``sessions``, ``history``, checkpoints, ``config``,
``rules`` and ``eval``.

Every user error ends as one line on stderr (``openprogram-lsp: error: …``) and a non-zero
exit code; ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from openprogram_lsp import __version__
from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.core.secrets import conceal_from_proc
from openprogram_lsp.terminal.errors import (
    EXIT_INTERRUPTED,
    PROG,
    CliError,
    OneLineFormatter,
    explain,
    report,
)
from openprogram_lsp.terminal.startup import start_up
from openprogram_lsp.terminal.workspaces import (
    choose_workspace,
    existing_workspace,
    require_git,
    session_workspace,
)

if TYPE_CHECKING:  # the commands import what they run (``--help`` needs none of it)
    from openprogram_lsp.app import AppConfig
    from openprogram_lsp.config import Settings
    from openprogram_lsp.dispatcher import Dispatcher

NOT_A_TERMINAL_SERVER = (
    "this starts the language server, which editors run for you over stdio; to try it from "
    "a terminal run 'openprogram-lsp chat --workspace DIR \"list .\"' (see 'openprogram-lsp "
    "--help'), or 'openprogram-lsp serve' to speak LSP here")


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str) -> NoReturn:
        report(message, f"see '{self.prog} --help'")
        raise SystemExit(2)


def _add_common(p: argparse.ArgumentParser, *, workspace: str = "workspace root "
                "(default: the current directory)") -> None:
    p.add_argument("--workspace", type=Path, default=None, metavar="DIR", help=workspace)
    p.add_argument("--home", type=Path, default=None, metavar="DIR",
                   help="state root (default: $OPENPROGRAM_HOME or "
                        "~/.local/share/openprogram-lsp)")


def _add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None, metavar="SPEC",
                   help="offline (default), scripted:FILE, openai:MODEL or anthropic:MODEL")
    p.add_argument("--permission-mode", default=None, metavar="MODE",
                   help="ask (default), accept-edits, plan or bypass")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = Parser(prog=PROG, description="An AI coding agent inside a language server.",
                    epilog="Add --debug to any command to see tracebacks. Settings: "
                           "'openprogram-lsp config'; docs/configuration.md.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the language server (editors start this)",
                           description="Speak LSP on stdio (or on 127.0.0.1:PORT with --tcp).")
    serve.add_argument("--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT")
    serve.add_argument("--token-file", type=Path, default=None, metavar="FILE",
                       help="with --tcp: use the token in FILE (mode 0600) instead of a "
                            "random one")
    serve.add_argument("--idle-exit", type=float, default=None, metavar="SECONDS",
                       help="with --tcp: exit after SECONDS without a connection")
    serve.add_argument("--keep-turns", type=float, default=None, metavar="SECONDS",
                       help="with --tcp: a turn whose editor goes away (a window reload) runs "
                            "on up to SECONDS for an editor to re-attach (openprogram/subscribe); "
                            "its approvals wait for it")
    _add_model(serve)
    serve.add_argument("--log-file", type=Path, default=None, metavar="FILE",
                       help="also write the server log here")
    _add_common(serve, workspace="workspace when the editor names none (default: cwd)")

    acp = sub.add_parser("acp", help="run as an Agent Client Protocol agent on stdio",
                         description="Speak the Agent Client Protocol on stdio.")
    _add_model(acp)
    acp.add_argument("--log-file", type=Path, default=None, metavar="FILE",
                     help="also write the log here")
    _add_common(acp)

    chat = sub.add_parser("chat", help="run one turn from the command line",
                          description="Run one turn and stream it. Approvals are asked on the "
                                      "terminal; without one, calls that need approval are "
                                      "refused and the exit code is 3.")
    chat.add_argument("text", nargs="*", help="the message (not needed with --compact)")
    chat.add_argument("--session", default=None, metavar="SID",
                      help="continue this session (in its own workspace)")
    chat.add_argument("--continue", dest="resume_last", action="store_true",
                      help="continue the most recent session of this workspace")
    chat.add_argument("--branch-from", default=None, metavar="NODE",
                      help="fork from this node id ('root' for a new root)")
    chat.add_argument("--code", action="store_true",
                      help="with --branch-from NODE: first bring the workspace back to the "
                           "code as it was at NODE (undoable, as a checkout --code)")
    _add_model(chat)
    chat.add_argument("--json", action="store_true", help="print events as JSON lines")
    chat.add_argument("--image", action="append", type=Path, default=[], metavar="FILE",
                      help="attach an image (PNG, JPEG, GIF or WebP; repeatable)")
    chat.add_argument("--compact", action="store_true",
                      help="compact the context of --session SID")
    chat.add_argument("--force-workspace", action="store_true",
                      help="run --session SID in --workspace DIR although it started elsewhere")
    _add_common(chat, workspace="workspace root (default: the session's, else the current "
                                "directory)")

    sessions = sub.add_parser("sessions", help="list sessions",
                              description="List sessions, most recent first.")
    sessions.add_argument("--json", action="store_true", help="print JSON")
    _add_common(sessions, workspace="only sessions of this workspace")

    history = sub.add_parser("history", help="show a session's active branch",
                             description="Print a session's branch from the root to the head.")
    history.add_argument("session", metavar="SID", help="session id ('sessions' lists them)")
    history.add_argument("--head", default=None, metavar="NODE",
                         help="show the branch ending at this node")
    history.add_argument("--json", action="store_true", help="print JSON")
    _add_common(history)

    branches = sub.add_parser("branches", help="list a session's branches and their code",
                              description="List a session's branch tips (* the active one), "
                                          "marking those whose code differs from the "
                                          "workspace.")
    branches.add_argument("session", metavar="SID", help="session id ('sessions' lists them)")
    branches.add_argument("--json", action="store_true", help="print JSON")
    _add_common(branches)

    checkout = sub.add_parser("checkout", help="switch a session's branch (--code: its code)",
                              description="Make BRANCH the session's active branch. With "
                                          "--code the workspace is restored to that branch's "
                                          "code first (undoable: it prints how).")
    checkout.add_argument("session", metavar="SID", help="session id")
    checkout.add_argument("branch", metavar="BRANCH", help="head node id or branch name")
    checkout.add_argument("--code", action="store_true",
                          help="also restore the workspace to the branch's code")
    _add_common(checkout)

    bdiff = sub.add_parser("branch-diff", help="compare two branches' code",
                           description="The diff from branch FROM's code to branch TO's (each "
                                       "branch's newest turn checkpoint).")
    bdiff.add_argument("session", metavar="SID", help="session id")
    bdiff.add_argument("old", metavar="FROM", help="head node id or branch name")
    bdiff.add_argument("new", metavar="TO", help="head node id or branch name")
    bdiff.add_argument("path", nargs="?", help="only this file or directory")
    bdiff.add_argument("--json", action="store_true",
                       help="print {diff, files, fromCheckpointId, toCheckpointId} as JSON")
    _add_common(bdiff)

    lst = sub.add_parser("checkpoints", help="list a workspace's checkpoints",
                         description="List checkpoints newest first: the state after each turn "
                                     "that changed files, baselines and restores.")
    lst.add_argument("--session", default=None, metavar="SID",
                     help="only this session's (and use its workspace)")
    lst.add_argument("--json", action="store_true", help="print JSON")
    _add_common(lst, workspace="workspace (default: the session's, else the current directory)")

    found_in = "workspace holding the checkpoint (default: searched in every workspace you " \
               "have sessions in)"
    diff = sub.add_parser("diff", help="show what a checkpoint changed",
                          description="The diff of a checkpoint against the one before it.")
    diff.add_argument("checkpoint", metavar="ID", help="checkpoint id (or a prefix of 6+)")
    diff.add_argument("path", nargs="?", help="only this file")
    _add_common(diff, workspace=found_in)

    restore = sub.add_parser("restore", help="put files back as a checkpoint had them",
                             description="Restore every file (or PATHs) as checkpoint ID had "
                                         "them. The current state is checkpointed first, so "
                                         "the restore can be undone. Files no checkpoint "
                                         "could record (over checkpoints.max_file_bytes, 5 MiB "
                                         "by default; unreadable; FIFOs, sockets, devices) are "
                                         "left as they are and printed as 'not restored'.")
    restore.add_argument("checkpoint", metavar="ID", help="checkpoint id (or a prefix of 6+)")
    restore.add_argument("paths", nargs="*", metavar="PATH", help="only these files")
    _add_common(restore, workspace=found_in)

    undo = sub.add_parser("undo", help="undo a turn's file changes (undoable)",
                          description="Put the files a turn changed back as they were before "
                                      "it, in one step; prints how to redo. Files no "
                                      "checkpoint could record (over "
                                      "checkpoints.max_file_bytes, 5 MiB by default; "
                                      "unreadable; FIFOs, sockets, devices) are left as they "
                                      "are and printed as 'not restored'.")
    undo.add_argument("turn", nargs="?", metavar="TURN",
                      help="the turn's checkpoint id, or its node id from 'history' "
                           "(default: the newest turn that changed files and is not "
                           "undone yet)")
    undo.add_argument("--session", default=None, metavar="SID",
                      help="the newest turn of this session (and its workspace)")
    _add_common(undo, workspace=found_in)

    hooks = sub.add_parser("hooks", help="list hooks and agent definitions; trust or revoke "
                                         "a workspace's",
                           description="List the hooks and agent definitions that apply to a "
                                       "workspace with their trust; trust, reject or revoke one.")
    decide = hooks.add_mutually_exclusive_group()
    decide.add_argument("--trust", metavar="ID", help="trust a workspace hook or agent definition")
    decide.add_argument("--reject", metavar="ID", help="refuse it for good")
    decide.add_argument("--revoke", metavar="ID", help="forget the decision (asked again)")
    hooks.add_argument("--json", action="store_true", help="print JSON")
    _add_common(hooks)

    rules = sub.add_parser("rules", help="list the workspace's approval rules, or revoke one",
                           description="List the standing approval rules of the workspace "
                                       "(every workspace rule and session rules), or forget "
                                       "one with --revoke ID.")
    rules.add_argument("--revoke", metavar="ID", default=None, help="forget this rule")
    rules.add_argument("--session", default=None, metavar="SID",
                       help="list the session rules of this session only")
    rules.add_argument("--json", action="store_true", help="print JSON")
    _add_common(rules)

    sub.add_parser("schema", help="print the JSON Schema of the protocol",
                   description="Print the JSON Schema of every openprogram/* message.")

    config = sub.add_parser("config", help="print the effective settings and their sources",
                            description="Print every setting, its value and where it came "
                                        "from (default, a config file, a variable or a flag).")
    config.add_argument("--json", action="store_true", help="print JSON")
    _add_model(config)
    _add_common(config)

    editor = sub.add_parser("editor", help="where this install's Neovim plugin or VS Code "
                                           "extension is",
                            description="Print the Neovim plugin's directory (for rtp:append "
                                        "or a lazy.nvim dir) or the VS Code extension's .vsix.")
    editor.add_argument("which", choices=("nvim", "vscode"), help="the editor")
    editor.add_argument("--install", action="store_true",
                        help="vscode: install the .vsix with `code --install-extension`")

    from openprogram_lsp.evals.args import DESCRIPTION, add_arguments

    ev = sub.add_parser("eval", help="run the evaluation tasks with a model and report",
                        description=DESCRIPTION)
    add_arguments(ev)

    box = sub.add_parser("sandbox", help="say whether commands run in the sandbox (exit 1: not)",
                         description="Say whether run_command is sandboxed here, and why not.")
    box.add_argument("--json", action="store_true", help="print JSON")
    return parser


# -- settings and workspaces ----------------------------------------------------------------

def _environment(args: argparse.Namespace) -> dict[str, str]:
    """The process environment, read once per command: every later settings load (each editor
    folder's, each ACP session's) reuses this copy."""
    env: dict[str, str] | None = getattr(args, "settings_env", None)
    if env is None:
        env = dict(os.environ)
        args.settings_env = env
    return env


def _settings(args: argparse.Namespace, workspace: Path | None) -> Settings:
    """Config files, environment and this command's flags, validated together."""
    from openprogram_lsp.config import load_settings

    home = getattr(args, "home", None)
    flags = {"model": (getattr(args, "model", None), "flag --model"),
             "permission_mode": (getattr(args, "permission_mode", None),
                                 "flag --permission-mode"),
             "home": (home.expanduser().resolve() if home else None, "flag --home")}
    return load_settings(workspace=workspace, env=_environment(args), flags=flags)


def _home(args: argparse.Namespace) -> Path:
    """The state root (never from a workspace file, so it is known before the workspace)."""
    return _settings(args, None).home


def _app(args: argparse.Namespace, workspace: Path) -> AppConfig:
    from openprogram_lsp.app import AppConfig

    return AppConfig.from_settings(_settings(args, workspace), workspace)


def _dispatcher(args: argparse.Namespace, workspace: Path, **kw: Any) -> Dispatcher:
    from openprogram_lsp.app import build_dispatcher

    require_git()
    return build_dispatcher(_app(args, workspace), **kw)


def _explicit(args: argparse.Namespace) -> Path | None:
    ws = getattr(args, "workspace", None)
    return existing_workspace(ws) if ws is not None else None


# -- commands -------------------------------------------------------------------------------

def cmd_chat(args: argparse.Namespace) -> int:
    """Run one turn, streaming its events."""
    with start_up():  # the imports and the app, with the garbage collector paused
        from openprogram_lsp.app import build_dispatcher
        from openprogram_lsp.terminal.chat import (
            attach_images,
            fork_code,
            last_session,
            preflight_model,
            run_chat,
            turn_request,
        )
        from openprogram_lsp.terminal.prompts import (
            NoTerminalAsker,
            TerminalApprover,
            TerminalAsker,
        )

        home = _home(args)
        if args.resume_last:
            args.session = last_session(home, args.session, args.workspace)
        workspace = choose_workspace(explicit=args.workspace, home=home, session=args.session,
                                     force=args.force_workspace)
        cfg = _app(args, workspace)
        req = turn_request(args, workspace=str(workspace), model=cfg.model,
                           mode=cfg.permission_mode)
        tty = sys.stdin.isatty()
        require_git()
        dispatcher = build_dispatcher(cfg, approver=TerminalApprover() if tty else None,
                                      asker=TerminalAsker() if tty else NoTerminalAsker())
        if args.session and args.force_workspace:
            dispatcher.services.store.update_meta(args.session, workspace=str(workspace))
        preflight_model(dispatcher, req.model or "offline", cfg.settings)
        attach_images(dispatcher, req, args.image, workspace)
        if args.code:
            fork_code(dispatcher, workspace, args.session, args.branch_from)
    return run_chat(dispatcher, req, args.json)


def cmd_sessions(args: argparse.Namespace) -> int:
    """List sessions (of one workspace with --workspace)."""
    only = _explicit(args)
    dispatcher = _dispatcher(args, only or Path.cwd())
    rows = dispatcher.services.store.list_sessions()
    if only is not None:
        rows = [r for r in rows if r.get("workspace") and Path(r["workspace"]).resolve() == only]
    if args.json:
        print(json.dumps([{k: r.get(k) for k in ("id", "title", "headId", "status",
                                                  "updatedAt", "workspace")} for r in rows]))
        return 0
    if not rows:
        where = f" in {only}" if only is not None else ""
        print(f"no sessions{where} yet; start one with: {PROG} chat \"list .\"")
    for r in rows:
        print(f"{r['id']}  {r.get('updatedAt', '')}  {r.get('title') or '(untitled)'}"
              f"  {r.get('workspace') or ''}")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """Print a session's branch root to head."""
    home = _home(args)
    workspace = session_workspace(home, args.session) or Path.cwd()
    dispatcher = _dispatcher(args, workspace if workspace.is_dir() else Path.cwd())
    nodes = dispatcher.services.store.get_branch(args.session, args.head)
    if args.json:
        print(json.dumps([n.wire() for n in nodes]))
        return 0
    print(f"# session {args.session} · workspace {workspace}")
    for n in nodes:
        status = f" ({n.status})" if n.status and n.status != "done" else ""
        print(f"── {n.role} {n.id}{status}")
        for call in n.tool_calls or []:
            print(f"   ⏺ {call.title or call.name} [{call.kind}] {call.status}")
        if n.metadata.get("checkpointId"):
            print(f"   ⎌ checkpoint {str(n.metadata['checkpointId'])[:12]}")
        ctx = n.metadata.get("context")
        if isinstance(ctx, dict):  # what the model saw (the turn's ContextCommit, in short)
            print(f"   ⎘ context {ctx.get('path')}: {ctx.get('estimate')}/"
                  f"{ctx.get('contextWindow')} tokens est., kept {ctx.get('kept')}, snipped "
                  f"{ctx.get('snipped')}, summarised {ctx.get('summarised')}, replaced "
                  f"{ctx.get('replaced')}")
        if n.text:
            print(n.text)
    return 0


def cmd_branches(args: argparse.Namespace) -> int:
    """branches, checkout and branch-diff: a session's branches with their code."""
    from openprogram_lsp.store.checkpoints import CheckpointStore
    from openprogram_lsp.terminal import branches as br

    home = _home(args)
    workspace = args.workspace or session_workspace(home, args.session) or Path.cwd()
    dispatcher = _dispatcher(args, workspace if workspace.is_dir() else Path.cwd())
    sessions = dispatcher.services.store
    found = dispatcher.checkpointer(workspace) if workspace.is_dir() else None
    store = found if isinstance(found, CheckpointStore) else None
    if args.command == "branches":
        return br.list_branches(sessions, store, args.session, args.json)
    if args.command == "checkout":
        return br.checkout(sessions, store, args.session, args.branch, args.code)
    return br.branch_diff(sessions, store, args.session, args.old, args.new, args.path,
                          args.json)


def _store_opener(args: argparse.Namespace) -> Callable[[Path], Any]:
    dispatchers: dict[Path, Dispatcher] = {}

    def open_store(workspace: Path) -> Any:
        if workspace not in dispatchers:
            dispatchers[workspace] = _dispatcher(args, workspace)
        store = dispatchers[workspace].checkpointer(workspace)
        if store is None:
            raise CliError(f"checkpoints are not available for {workspace}")
        return store

    return open_store


def cmd_checkpoints(args: argparse.Namespace) -> int:
    """List a workspace's checkpoints."""
    from openprogram_lsp.terminal import checkpoints as cps

    home = _home(args)
    workspace = choose_workspace(explicit=args.workspace, home=home, session=args.session)
    if not cps.has_store(home, workspace):
        return cps.none_here(workspace, home, args.json)
    store = _store_opener(args)(workspace)
    return cps.list_checkpoints(store, workspace, args.session, args.json, home)


def cmd_diff_restore(args: argparse.Namespace) -> int:
    """Diff or restore a checkpoint, found in whichever workspace holds it."""
    from openprogram_lsp.terminal import checkpoints as cps

    home = _home(args)
    workspace, store = cps.locate(args.checkpoint, explicit=_explicit(args), preferred=None,
                                  home=home, open_store=_store_opener(args))
    if args.command == "diff":
        return cps.show_diff(store, args.checkpoint, args.path)
    return cps.restore(store, workspace, args.checkpoint, args.paths)


def cmd_undo(args: argparse.Namespace) -> int:
    """Undo a turn's file changes."""
    from openprogram_lsp.terminal import checkpoints as cps

    home = _home(args)
    open_store = _store_opener(args)
    explicit = _explicit(args)
    if args.turn is None or explicit is not None or args.session:
        workspace = choose_workspace(explicit=args.workspace, home=home, session=args.session)
        if not cps.has_store(home, workspace):
            raise CliError(f"no turn changed files in {workspace}", cps.elsewhere(workspace, home))
        store = open_store(workspace)
        try:
            turn = cps.find_turn(store, args.turn, args.session,
                                 on_branch=_on_current_branch(args, workspace))
        except NotFound as exc:
            raise CliError(f"{exc.message} in workspace {workspace}",
                           "pass a checkpoint id from 'openprogram-lsp checkpoints' or a node "
                           "id from 'openprogram-lsp history SID'") from None
        return cps.undo(store, workspace, turn)
    # a turn named without a workspace: look where the user has sessions
    workspace, store = cps.locate(args.turn, explicit=None, preferred=None, home=home,
                                  open_store=open_store,
                                  probe=lambda s: cps.find_turn(s, args.turn, None))
    return cps.undo(store, workspace, cps.find_turn(store, args.turn, None))


def _on_current_branch(args: argparse.Namespace, workspace: Path) -> Callable[[Any], bool]:
    """Whether a turn checkpoint's turn is on its session's current branch (True where the
    session is gone or unknown: its turn is then the newest there is)."""
    sessions = _dispatcher(args, workspace).services.store
    chains: dict[str, set[str]] = {}

    def on_branch(checkpoint: Any) -> bool:
        sid, turn = checkpoint.session_id, checkpoint.turn_id
        if not sid or not turn or not sessions.exists(sid):
            return True
        if sid not in chains:
            chains[sid] = {n.id for n in sessions.get_branch(sid)}
        return str(turn) in chains[sid]

    return on_branch


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the language server (the settings are read after ``initialize`` is answered)."""
    from openprogram_lsp.lsp.serve import serve

    workspace = _explicit(args) or Path.cwd()
    require_git()
    if args.tcp is None and sys.stdin.isatty():
        sys.stderr.write(f"{PROG}: speaking LSP on stdio (editors start this for you); "
                         "Ctrl-C stops\n")

    def configure() -> Callable[[], Dispatcher]:
        from openprogram_lsp.app import build_dispatcher

        cfg = _app(args, workspace)
        cfg.settings_for = lambda folder: _settings(args, folder)  # each folder's own file
        return lambda: build_dispatcher(cfg)

    return serve(args, configure)


def cmd_acp(args: argparse.Namespace) -> int:
    """Run the ACP agent on stdio."""
    from openprogram_lsp.acp.stdio import claim_stdout

    frames = claim_stdout()  # before anything else can write to stdout
    from openprogram_lsp.acp.server import serve
    from openprogram_lsp.app import build_dispatcher
    from openprogram_lsp.tools.mcp.sources import McpToolSources

    workspace = _explicit(args) or Path.cwd()
    cfg = _app(args, workspace)
    cfg.settings_for = lambda folder: _settings(args, folder)  # each session's cwd's own file
    dispatcher = build_dispatcher(cfg)
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
    settings = _settings(args, _explicit(args) or Path.cwd().resolve())
    rows = settings.rows()
    if args.json:
        keys = {name: {"found": found, "source": source}
                for name, found, source in _key_sources(settings, _environment(args))}
        print(json.dumps({"files": [str(f) for f in settings.files], "keys": keys,
                          "workspace": str(settings.workspace), "trusted": settings.trusted,
                          "settings": [{"key": k, "value": v, "source": s}
                                       for k, v, s in rows]}))
        return 0
    user = settings.user_path
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
    for provider, found, source in _key_sources(settings, _environment(args)):
        state = {True: "found", False: "not found", None: "from a command"}[found]
        print(f"# {provider} API key: {state} ({source})")
    return 0


def _key_sources(settings: Settings, env: dict[str, str]) -> list[tuple[str, bool | None, str]]:
    """(provider, key found?, where it is looked for) for each remote provider."""
    providers = settings.sections["providers"]
    return [(name, *getattr(providers, name).key_source(env, f"{name.upper()}_API_KEY"))
            for name in ("openai", "anthropic")]


def cmd_hooks(args: argparse.Namespace) -> int:
    """List hooks and agent definitions with their trust; trust, reject or revoke one."""
    from openprogram_lsp.hooks.engine import HookEngine

    ws = _explicit(args) or Path.cwd().resolve()
    cfg = _app(args, ws)
    engine = HookEngine(cfg.home)
    for decision, ident in (("trust", args.trust), ("reject", args.reject),
                            ("forget", args.revoke)):
        if ident:
            state = engine.set_trust(ws, ident, decision)
            print(f"{ident}: {state}")
            return 0
    hooks, agents = engine.listing(ws), engine.agent_listing(ws)
    if args.json:
        from openprogram_lsp.lsp import dumps

        listed = dumps.hooks(hooks, engine.config(ws).warnings)
        print(json.dumps({"hooks": listed["hooks"], "agents": dumps.agent_definitions(agents),
                          "warnings": listed["warnings"]}))
        return 0
    for h in hooks:
        matcher = f"({h.matcher})" if h.matcher else ""
        flags = (" critical" if h.critical else "") + (" async" if h.background else "")
        kind = f"{h.type}: " if h.type != "command" else ""
        what = h.command
        if h.type in ("prompt", "agent"):  # a prompt on one line (commands stay as they are)
            what = " ".join(what.split())
            what = what if len(what) <= 120 else what[:117] + "..."
        print(f"{h.id}  {h.trust:<8} {h.event}{matcher}{flags}  {kind}{what}  [{h.source}]")
    for a in agents:
        print(f"{a.id}  {a.trust:<8} agent {a.name}: {a.description}  [{a.source}]")
    for w in engine.config(ws).warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not hooks and not agents:
        print("no hooks or agent definitions apply to this workspace")
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    """List the standing approval rules of the workspace, or revoke one."""
    from openprogram_lsp.approvals.rulebook import RuleBook

    ws = _explicit(args) or Path.cwd().resolve()
    book = RuleBook.for_workspace(_home(args), ws)
    if args.revoke:
        try:
            rule = book.revoke(args.revoke)
        except NotFound:
            raise CliError(f"no rule {args.revoke!r} for {ws}",
                           f"list them with '{PROG} rules'") from None
        print(f"revoked {rule.id}: {rule.decision} {rule.description}")
        return 0
    listed = book.listed(args.session)
    if args.json:
        print(json.dumps([r.wire() for r in listed]))
        return 0
    if not listed:
        print(f"no rules for {ws}")
    for r in listed:
        scope = f"session {r.session_id}" if r.scope == "session" else "workspace"
        print(f"{r.id}  {r.decision:<5}  {scope:<28}  {r.created_at or '-':<24}  "
              f"{r.description}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Run the evaluation tasks (``openprogram_lsp.evals``)."""
    from openprogram_lsp.evals.command import run

    return run(args)


def cmd_sandbox(args: argparse.Namespace) -> int:
    """Print whether ``run_command`` will be sandboxed here, and why not."""
    from openprogram_lsp.tools.sandbox import status

    info = status(_settings(args, Path.cwd()))
    print(json.dumps(info) if args.json else info["message"])
    return 0 if info["sandboxed"] or info["mode"] == "off" else 1


def cmd_editor(args: argparse.Namespace) -> int:
    """Print (or install) the editor client this install carries."""
    from openprogram_lsp.terminal import editor

    if args.which == "nvim":
        if args.install:
            raise CliError("--install is for vscode; add the printed directory to Neovim's "
                           "runtimepath (see editors/nvim/README.md)")
        print(editor.nvim_dir())
        return 0
    path = editor.vsix()
    if args.install:
        return editor.install_vsix(path)
    print(path)
    return 0


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "chat": cmd_chat, "sessions": cmd_sessions, "history": cmd_history,
    "checkpoints": cmd_checkpoints, "diff": cmd_diff_restore, "restore": cmd_diff_restore,
    "undo": cmd_undo, "branches": cmd_branches, "checkout": cmd_branches,
    "branch-diff": cmd_branches, "serve": cmd_serve, "schema": cmd_schema, "acp": cmd_acp,
    "config": cmd_config, "sandbox": cmd_sandbox, "hooks": cmd_hooks,
    "rules": cmd_rules, "editor": cmd_editor, "eval": cmd_eval,
}


def _logging(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    fmt = "%(levelname)s %(name)s: %(message)s"
    handler.setFormatter(logging.Formatter(fmt) if debug else OneLineFormatter(fmt))
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, handlers=[handler])


def _quiet_stdout() -> None:
    """After a closed pipe (``| head``): send the rest of stdout nowhere, silently."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``openprogram-lsp`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    if not argv:
        if sys.stdin.isatty():
            report(NOT_A_TERMINAL_SERVER)
            return 2
        argv = ["serve"]  # an LSP client that starts us without arguments
    elif argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["serve", *argv]
    _logging(debug)
    try:
        args = build_parser().parse_args(argv)
        conceal_from_proc()  # commands must not read the provider keys from /proc/<our pid>
        if args.command is None:
            build_parser().print_help()
            return 2
        code = HANDLERS[args.command](args)
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except SystemExit:
        raise
    except Exception as exc:
        if debug:
            raise
        message, hint, code = explain(exc)
        report(message, hint)
        return code


if __name__ == "__main__":
    raise SystemExit(main())
