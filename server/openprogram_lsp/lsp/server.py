"""The pygls server: lifecycle, settings, watchers, and ``serve`` (stdio or ``--tcp PORT``)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from openprogram_lsp import __version__
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.config.sections.mcp import ToolsSection
from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.core.types import PERMISSION_MODES
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.lsp.bridge import EventBridge
from openprogram_lsp.lsp.handlers import Handlers
from openprogram_lsp.lsp.logs import WindowLogHandler, configure_logging
from openprogram_lsp.lsp.prompts import LspApprover, LspAsker
from openprogram_lsp.lsp.protocol import OpenProgramProtocol
from openprogram_lsp.lsp.settings import Settings, client_features, parse_options
from openprogram_lsp.lsp.turns import TurnRunner
from openprogram_lsp.store.watcher import WorkspaceWatcher
from openprogram_lsp.tools.sandbox import status as sandbox_status

log = logging.getLogger(__name__)

DispatcherFactory = Callable[[], Dispatcher]


class OpenProgramServer(LanguageServer):
    """A language server hosting one dispatcher."""

    def __init__(self, dispatcher: Dispatcher, settings: Settings | None = None) -> None:
        super().__init__("openprogram-lsp", __version__, protocol_cls=OpenProgramProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.None_)
        self.dispatcher = dispatcher
        self.settings = settings or Settings()
        self.folders: list[Path] = []
        self.watchers: dict[Path, WorkspaceWatcher] = {}
        self.bridge: EventBridge | None = None
        self.runner: TurnRunner = TurnRunner(dispatcher, self, [])
        self.log_handler: WindowLogHandler | None = None
        services = dispatcher.services
        services.approver = LspApprover(self, self.settings, bus=services.bus)
        services.asker = LspAsker(self, self.settings, show=self.show_info)
        self._background: set[asyncio.Future[None]] = set()

    # -- Peer interface used by prompts ------------------------------------------------------

    def request(self, method: str, params: Any, msg_id: str) -> asyncio.Future[Any]:
        """Send a request with a known id."""
        return self.protocol.send_request_async(method, params, msg_id=msg_id)  # type: ignore[no-any-return]

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self.protocol.notify(method, params)

    def forget_request(self, msg_id: str) -> None:
        """Stop waiting for a response."""
        proto = self.protocol
        if isinstance(proto, OpenProgramProtocol):
            proto.forget_request(msg_id)

    def show_info(self, message: str) -> None:
        """``window/showMessage`` at info level."""
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Info,
                                                         message=message))

    def track(self, fut: asyncio.Future[None]) -> None:
        """Keep a background task alive until it is done."""
        self._background.add(fut)
        fut.add_done_callback(self._background.discard)

    async def report_sandbox(self) -> None:
        """Log whether commands run sandboxed; warn the user when they will not."""
        info = await asyncio.to_thread(sandbox_status, self.dispatcher.services.settings)
        log.info("%s", info["message"])
        if not info["sandboxed"] and info["mode"] != "off":
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"OpenProgram: {info['message']}"))

    # -- state -------------------------------------------------------------------------------

    @property
    def primary_workspace(self) -> Path:
        """The first workspace folder (or the configured workspace)."""
        return self.folders[0] if self.folders else Path(self.dispatcher.services.workspace)

    def apply_options(self, raw: Any, *, merge: bool = False) -> None:
        """Take editor options; with ``merge`` (configuration changes) only the fields given."""
        options, problem = parse_options(raw)
        if merge:
            given = {name: getattr(options, name) for name in options.model_fields_set}
            options = self.settings.options.model_copy(update=given)
        self.settings.options = options
        services = self.dispatcher.services
        services.question_timeout = self.settings.question_timeout
        if options.agent_model:
            services.extra["agent.model"] = options.agent_model
        if options.max_messages:
            services.extra["agent.max_messages"] = options.max_messages
        if "mcp_servers" in options.model_fields_set or not merge:
            problems = (services.mcp.set_editor_servers(options.mcp_servers)
                        if services.mcp is not None else [])
            problem = "; ".join([*([problem] if problem else []), *problems]) or None
        if options.disabled_tools is not None or options.allowed_tools is not None:
            base = services.settings.get(ToolsSection) if services.settings else ToolsSection()
            # the editor adds to what config.toml disables; its allow-list replaces the file's
            services.disabled_tools = [*base.disabled, *(options.disabled_tools or [])]
            if options.allowed_tools is not None:
                services.allowed_tools = list(options.allowed_tools)
        rules = self.settings.rules()
        if rules:
            for folder in self.folders or [self.primary_workspace]:
                services.rules_for(folder).replace_config_rules(rules)
        if problem:
            log.warning("%s", problem)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                             message=problem))

    def set_folders(self, folders: list[Path]) -> None:
        """Use these workspace folders; (re)start their watchers."""
        self.folders = [f.resolve() for f in folders]
        if self.folders:
            self.dispatcher.services.workspace = self.folders[0]
        self._sync_watchers()

    def _sync_watchers(self) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        wanted = set(self.folders)
        for root in list(self.watchers):
            if root not in wanted:
                stopping = asyncio.ensure_future(self.watchers.pop(root).stop())
                self._background.add(stopping)
                stopping.add_done_callback(self._background.discard)
        for root in self.folders:
            if root not in self.watchers and root.is_dir():
                watcher = WorkspaceWatcher(root, self.dispatcher.services.bus,
                                           on_changes=self._note_changes,
                                           exclude=[self.dispatcher.services.store.home])
                self.watchers[root] = watcher
                watcher.start()

    def _note_changes(self, root: Path, changes: list[dict[str, str]]) -> None:
        checkpointer = self.dispatcher.checkpointer(root)
        if checkpointer is not None:
            checkpointer.note_paths([c["path"] for c in changes])

    def start_bridge(self) -> None:
        """Forward bus events to the client."""
        if self.bridge is None:
            loop = asyncio.get_running_loop()
            self.bridge = EventBridge(self.dispatcher.services.bus, self.notify, loop)
            self.dispatcher.agents.runner.attach_loop(loop)  # jobs share the editor's loop
            self.runner = TurnRunner(self.dispatcher, self, self.bridge.listeners)
            self.bridge.start()

    async def stop(self) -> None:
        """Cancel turns, wait for their finalize, stop watchers and the bridge."""
        await self.runner.shutdown()
        for watcher in list(self.watchers.values()):
            await watcher.stop()
        self.watchers.clear()
        if self.dispatcher.services.mcp is not None:
            await self.dispatcher.services.mcp.aclose()
        if self.bridge is not None:
            self.bridge.stop()


def _folders(params: types.InitializeParams) -> list[Path]:
    out: list[Path] = []
    for folder in params.workspace_folders or []:
        path = to_fs_path(folder.uri)
        if path:
            out.append(Path(path))
    if not out and params.root_uri:
        path = to_fs_path(params.root_uri)
        if path:
            out.append(Path(path))
    if not out and params.root_path:
        out.append(Path(params.root_path))
    return out


def build_server(dispatcher: Dispatcher, *, flag_mode: str | None = None) -> OpenProgramServer:
    """A server with every feature registered (``--model`` is the dispatcher's default model).

    A permission mode from a flag or the environment beats the editor's options; one from a
    config file only fills in when the editor sets none."""
    mode = flag_mode if flag_mode in PERMISSION_MODES else None
    file_mode = None
    configured = dispatcher.services.settings
    if configured is not None and mode is None:
        source = configured.sources.get("permission_mode", "default")
        chosen = configured.get(CoreSettings).permission_mode
        if source.startswith(("env ", "flag ")):
            mode = chosen
        elif source != "default":
            file_mode = chosen
    settings = Settings(flag_mode=mode, file_mode=file_mode)  # type: ignore[arg-type]
    server = OpenProgramServer(dispatcher, settings)
    for name, handler in Handlers(server).table().items():
        server.feature(name)(handler)

    @server.feature(types.INITIALIZE)
    def on_initialize(params: types.InitializeParams) -> None:
        server.start_bridge()
        if server.log_handler is not None:
            server.log_handler.attach(server, asyncio.get_running_loop())
        server.settings.client = client_features(params.capabilities)
        folders = _folders(params)
        server.folders = [f.resolve() for f in folders]
        if server.folders:
            server.dispatcher.services.workspace = server.folders[0]
        server.apply_options(params.initialization_options)

    @server.feature(types.INITIALIZED)
    def on_initialized(params: types.InitializedParams) -> None:
        server.set_folders(server.folders)
        log.info("openprogram-lsp %s ready; workspace %s", __version__,
                 server.primary_workspace)
        server.track(asyncio.ensure_future(server.report_sandbox()))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(params: types.DidChangeConfigurationParams) -> None:
        if params.settings is not None:  # null: a pull-model client; keep the options
            server.apply_options(params.settings, merge=True)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        removed = {Path(p) for f in params.event.removed if (p := to_fs_path(f.uri))}
        added = [Path(p) for f in params.event.added if (p := to_fs_path(f.uri))]
        keep = [f for f in server.folders if f not in {r.resolve() for r in removed}]
        server.set_folders(keep + [a for a in added if a.resolve() not in keep])

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(params: Any) -> None:
        await server.stop()

    return server


def serve(args: argparse.Namespace, build: DispatcherFactory | None = None) -> int:
    """Run the server on stdio, or on 127.0.0.1:PORT with ``--tcp PORT``."""
    log_handler = configure_logging(getattr(args, "log_file", None))
    if build is None:
        raise RuntimeError("serve() needs a dispatcher factory (see cli.cmd_serve)")
    try:
        dispatcher = build()
    except (OSError, OpenProgramError) as exc:  # an unusable state root, a bad setting
        from openprogram_lsp.lsp.unusable import serve_unusable

        detail = exc.message if isinstance(exc, OpenProgramError) else (
            f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
        reason = f"openprogram-lsp cannot start: {detail} (check OPENPROGRAM_HOME)"
        sys.stderr.write(reason + "\n")
        if getattr(args, "tcp", None) is not None:
            return 2
        return serve_unusable(reason, sys.stdin.buffer, sys.stdout.buffer)
    server = build_server(dispatcher, flag_mode=getattr(args, "permission_mode", None))
    server.log_handler = log_handler
    port = getattr(args, "tcp", None)
    if port is not None:
        host = getattr(args, "host", None) or "127.0.0.1"
        log.info("listening on %s:%s", host, port)
        server.start_tcp(host, int(port))
    else:
        server.start_io(sys.stdin.buffer, sys.stdout.buffer)
    return 0
