"""The per-connection pygls server and how one is built for a dispatcher."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from openprogram_lsp import __version__
from openprogram_lsp.config import Settings as ConfigSettings
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.core.types import PERMISSION_MODES, ClientOptions, PermissionMode
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.dispatcher.warmup import warm_up
from openprogram_lsp.lsp.agent_actions import code_actions
from openprogram_lsp.lsp.agent_actions import register as register_agent_commands
from openprogram_lsp.lsp.blame_features import register as register_blame
from openprogram_lsp.lsp.bridge import EventBridge
from openprogram_lsp.lsp.capabilities import SYNC_KIND
from openprogram_lsp.lsp.capabilities import check as check_capabilities
from openprogram_lsp.lsp.checkpoint_warmup import CheckpointWarmup
from openprogram_lsp.lsp.handlers import Handlers
from openprogram_lsp.lsp.host import ServerHost
from openprogram_lsp.lsp.prompts import LspApprover, LspAsker
from openprogram_lsp.lsp.protocol import OpenProgramProtocol
from openprogram_lsp.lsp.settings import Settings, client_features, parse_options
from openprogram_lsp.lsp.turns import TurnRunner
from openprogram_lsp.lsp.wire import REQUESTS
from openprogram_lsp.tools.sandbox import status as sandbox_status

log = logging.getLogger(__name__)

TURN_WIRE = (*REQUESTS["openprogram/chat"], REQUESTS["openprogram/sessions"][0])
"""The wire models of a turn's request and answer, built ahead with the turn's own, and the
params of the listing editors ask for first (its result is built as dicts)."""



class OpenProgramServer(LanguageServer):
    """One editor's connection: its settings, capabilities, folders, approver and asker."""

    def __init__(self, host: ServerHost, settings: Settings | None = None) -> None:
        super().__init__("openprogram-lsp", __version__, protocol_cls=OpenProgramProtocol,
                         text_document_sync_kind=SYNC_KIND)
        self.host = host
        self.settings = settings or Settings(flag_mode=host.flag_mode)
        self.folders: list[Path] = []
        self.subscriptions: set[str] = set()
        self.all_events = host.single  # one editor sees everything, as before several existed
        self.initialized = False
        self.approver = LspApprover(self, self.settings, bus=host.dispatcher.services.bus)
        self.asker = LspAsker(self, self.settings, show=self.show_info)
        self.end_link: Callable[[int], None] | None = None
        self.owner_key = f"editor-{id(self):x}"
        self.client_options = ClientOptions(mcp_owner=self.owner_key)
        self._config_problem = ""
        self._background: set[asyncio.Future[None]] = set()

    @property
    def dispatcher(self) -> Dispatcher:
        """The shared dispatcher."""
        return self.host.dispatcher

    @property
    def runner(self) -> TurnRunner:
        """The shared turn runner."""
        return self.host.runner

    @property
    def bridge(self) -> EventBridge | None:
        """The shared event bridge (once a client initialized)."""
        return self.host.bridge

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

    def show_warning(self, message: str) -> None:
        """``window/showMessage`` at warning level (best effort: the link may be gone)."""
        try:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                             message=message))
        except Exception:
            log.debug("warning not delivered", exc_info=True)

    def track(self, fut: asyncio.Future[None]) -> None:
        """Keep a background task alive until it is done."""
        self._background.add(fut)
        fut.add_done_callback(self._background.discard)

    async def report_sandbox(self) -> None:
        """Log whether commands run sandboxed; warn the user when they will not."""
        info = await asyncio.to_thread(sandbox_status, self.workspace_settings())
        log.info("%s", info["message"])
        if not info["sandboxed"] and info["mode"] != "off":
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"OpenProgram: {info['message']}"))

    def sees(self, session_id: str | None) -> bool:
        """Whether this connection receives the events of a session (None: not tied to one)."""
        return self.initialized and (self.all_events or session_id is None
                                     or session_id in self.subscriptions)

    def send_raw(self, data: bytes) -> bool:
        """Write an already framed message; False when the link is gone."""
        writer = self.protocol.writer
        if writer is None:
            return False
        try:
            writer.write(data)
        except Exception:
            log.debug("event not delivered", exc_info=True)
            return False
        return True

    def exit_link(self, code: int) -> None:
        """``exit``: end this connection (the process too when it serves one editor)."""
        if self.end_link is not None:
            self.end_link(code)

    # -- state -------------------------------------------------------------------------------

    @property
    def primary_workspace(self) -> Path:
        """The first workspace folder (or the configured workspace)."""
        return self.folders[0] if self.folders else Path(self.dispatcher.services.workspace)

    def apply_options(self, raw: Any, *, merge: bool = False) -> None:
        """Take editor options; with ``merge`` (configuration changes) only the fields given.

        Everything lands on this connection (``client_options``), never on the shared
        services: over TCP another editor's options never reach this editor's turns."""
        options, problem = parse_options(raw)
        if merge:
            given = {name: getattr(options, name) for name in options.model_fields_set}
            options = self.settings.options.model_copy(update=given)
        self.settings.options = options
        mcp = self.dispatcher.services.mcp
        if mcp is not None and ("mcp_servers" in options.model_fields_set or not merge):
            problems = mcp.set_editor_servers(options.mcp_servers, owner=self.owner_key)
            problem = "; ".join([*([problem] if problem else []), *problems]) or None
        self.client_options = ClientOptions(
            question_timeout=options.question_timeout,
            disabled_tools=tuple(options.disabled_tools or ()),
            allowed_tools=tuple(options.allowed_tools) if options.allowed_tools is not None
            else None,
            agent_model=options.agent_model, max_messages=options.max_messages,
            mcp_owner=self.owner_key, providers=options.provider_overrides())
        if problem:
            log.warning("%s", problem)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                             message=problem))

    def workspace_settings(self) -> ConfigSettings | None:
        """The config files' settings of this editor's folder; a bad file is shown once."""
        try:
            return self.dispatcher.services.workspace_settings(self.primary_workspace)
        except OpenProgramError as exc:
            if exc.message != self._config_problem:
                self._config_problem = exc.message
                log.warning("%s", exc.message)
                self.window_show_message(types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"OpenProgram: {exc.message}"))
            return None

    def set_folders(self, folders: list[Path]) -> None:
        """Use these workspace folders; (re)start the host's watchers."""
        self.folders = [f.resolve() for f in folders]
        if self.folders and self.host.single:
            self.dispatcher.services.workspace = self.folders[0]
        self.host.sync_watchers()

    async def stop(self) -> None:
        """``shutdown``: one editor stops everything; on TCP only this connection's turns
        (which with ``--keep-turns`` wait for an editor to re-attach)."""
        if self.host.single:
            await self.host.stop()
        else:
            self.host.release(self)


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


def flag_mode_of(value: str | None) -> PermissionMode | None:
    """A ``--permission-mode`` value, None when absent or unknown."""
    return value if value in PERMISSION_MODES else None  # type: ignore[return-value]


def initial_settings(dispatcher: Dispatcher, flag_mode: PermissionMode | None,
                     configured: ConfigSettings | None = None) -> Settings:
    """A connection's starting settings (``configured``: its folder's, else the server's).

    A permission mode from a flag or the environment beats the editor's options; one from a
    config file only fills in when the editor sets none."""
    mode = flag_mode
    file_mode = None
    if configured is None:
        configured = dispatcher.services.settings
    if configured is not None and mode is None:
        source = configured.sources.get("permission_mode", "default")
        chosen = configured.get(CoreSettings).permission_mode
        if source.startswith(("env ", "flag ")):
            mode = chosen
        elif source != "default":
            file_mode = chosen
    return Settings(flag_mode=mode, file_mode=file_mode)  # type: ignore[arg-type]


def build_server(dispatcher: Dispatcher | None = None, *, flag_mode: str | None = None,
                 host: ServerHost | None = None) -> OpenProgramServer:
    """A connection's server with every feature registered (a new host for one editor)."""
    if host is None:
        assert dispatcher is not None
        host = ServerHost(dispatcher, flag_mode=flag_mode_of(flag_mode), single=True)
    server = OpenProgramServer(host, initial_settings(host.dispatcher, host.flag_mode))
    handlers = Handlers(server)
    warmup = CheckpointWarmup(server)  # each folder's first checkpoint walk, in the background
    for name, handler in handlers.table().items():
        server.feature(name)(handler)
    register_blame(server, handlers.blame, more_actions=code_actions)
    register_agent_commands(server, handlers.agent_actions)

    @server.feature(types.INITIALIZE)
    def on_initialize(params: types.InitializeParams) -> None:
        server.settings.client = client_features(params.capabilities)
        folders = _folders(params)
        server.folders = [f.resolve() for f in folders]
        if server.folders and host.single:
            server.dispatcher.services.workspace = server.folders[0]
        # the permission mode of the editor's folder's config file, not the server's cwd
        modes = initial_settings(server.dispatcher, host.flag_mode, server.workspace_settings())
        server.settings.flag_mode, server.settings.file_mode = modes.flag_mode, modes.file_mode
        server.apply_options(params.initialization_options)
        server.initialized = True
        host.attach(server)

    @server.feature(types.INITIALIZED)
    def on_initialized(params: types.InitializedParams) -> None:
        server.set_folders(server.folders)
        warmup.start(server.folders)
        # what the first turn would build (schemas, validators), one step per loop iteration
        server.track(asyncio.ensure_future(warm_up(server.dispatcher.services, TURN_WIRE)))
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
        warmup.start(server.folders)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_saved(params: types.DidSaveTextDocumentParams) -> None:
        """Nothing to do: a buffer is dirty while its text differs from the disk."""

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(params: Any) -> None:
        warmup.stop()
        await server.stop()

    fm = server.protocol.fm
    check_capabilities(fm.features, fm.feature_options, list(fm.commands))
    return server
