"""The MCP hub: every workspace's servers, their trust, their tools, prompts and resources.

Definitions come from the user config file, the workspace's ``.mcp.json`` (asked about first:
see ``trust``), editor settings and ACP sessions. Servers start lazily, on a workspace's first
turn (or when an ACP session hands them over), on the MCP loop; nothing here imports the SDK
until a server is actually configured.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openprogram_lsp.core.ports import Approver
from openprogram_lsp.core.turn_root import real_path
from openprogram_lsp.core.types import PermissionOption, PermissionRequest, PermissionToolCall
from openprogram_lsp.tools.base import Tool
from openprogram_lsp.tools.mcp.config import (
    ORIGIN_ORDER,
    Origin,
    ServerDef,
    full_name,
    merge,
    parse_acp_servers,
    parse_servers,
    read_json_servers,
    read_user_servers,
    user_config_path,
)
from openprogram_lsp.tools.mcp.loop import McpLoop
from openprogram_lsp.tools.mcp.trust import TrustBook, TrustDecision

if TYPE_CHECKING:  # the running side, loaded with a workspace's first server (``_sync``)
    from openprogram_lsp.tools.mcp.catalog import (
        CallResult,
        PromptInfo,
        ResourceInfo,
        ServerState,
        ToolInfo,
    )
    from openprogram_lsp.tools.mcp.connection import Connection
    from openprogram_lsp.tools.mcp.tool import McpTool

log = logging.getLogger(__name__)

WORKSPACE_FILE = ".mcp.json"
RELIST_WAIT = 5.0
"""Seconds a turn waits for a running list_changed relisting of a server before it lists tools."""


def trust_options() -> list[PermissionOption]:
    """What the question about starting a server offers (made when asked)."""
    return [
        PermissionOption(option_id="allow_always", name="Trust and start it",
                         kind="allow_always"),
        PermissionOption(option_id="allow_once", name="Start it this time", kind="allow_once"),
        PermissionOption(option_id="reject_once", name="Not now", kind="reject_once"),
        PermissionOption(option_id="reject_always", name="Never start it",
                         kind="reject_always"),
    ]


@dataclass(slots=True)
class _FileDefs:
    signature: tuple[int, int] | None = None
    defs: list[ServerDef] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Space:
    """One workspace's MCP state."""

    root: Path
    trust: TrustBook
    file: _FileDefs = field(default_factory=_FileDefs)
    extra: dict[str, list[ServerDef]] = field(default_factory=dict)  # by owner (ACP session)
    connections: dict[str, Connection] = field(default_factory=dict)
    blocked: dict[str, tuple[ServerState, str]] = field(default_factory=dict)
    tools: dict[tuple[str, int], list[McpTool]] = field(default_factory=dict)
    asking: set[str] = field(default_factory=set)


class McpHub:
    """MCP servers per workspace, shared by every transport and turn of the process."""

    def __init__(self, home: Path, *, user_config: Path | None = None,
                 read_user_config: bool = True, startup_timeout: float | None = None,
                 call_timeout: float | None = None) -> None:
        self.home = home
        self.startup_timeout = startup_timeout or 30.0
        self.call_timeout = call_timeout or 120.0
        self._user_path = user_config or user_config_path()
        self._read_user = read_user_config
        self._user = _FileDefs()
        self._editor: dict[str, list[ServerDef]] = {}  # by owner (an editor connection)
        # trust answers about editors' servers: one book for every workspace (they are the
        # same servers wherever the editor works), beside the workspaces' books
        self.editor_trust = TrustBook(home / "mcp-trust" / "editor-settings.json")
        self.problems: list[str] = []
        self._spaces: dict[str, _Space] = {}  # by real path
        self._lock = threading.Lock()
        self._loop = McpLoop()
        # (workspace, server, tools) when a running server adds tools (from the MCP loop)
        self.on_tools_added: Callable[[Path, str, list[dict[str, Any]]], None] | None = None

    # -- configuration -----------------------------------------------------------------------

    def space(self, workspace: Path) -> _Space:
        """The state of one workspace (created on first use)."""
        real = real_path(workspace)
        with self._lock:
            sp = self._spaces.get(real)
            if sp is None:
                root = Path(real)
                sp = self._spaces[real] = _Space(root, TrustBook.for_workspace(self.home, root))
            return sp

    def set_editor_servers(self, block: Any, owner: str = "editor") -> list[str]:
        """Servers from one editor's settings (``mcpServers``); returns problems.

        They run in every workspace that editor works in, but their tools are offered only
        to turns of that editor (``tools_for(editor_owner=...)``). ``None`` forgets them."""
        defs, problems = parse_servers(block, "editor") if block else ([], [])
        with self._lock:
            if defs:
                self._editor[owner] = defs
            else:
                self._editor.pop(owner, None)
        return problems

    def _editor_names(self, owner: str | None) -> set[str] | None:
        """Names of one editor's servers (None: no owner given, every editor's)."""
        if owner is None:
            return None
        with self._lock:
            return {d.name for d in self._editor.get(owner, [])}

    def add_servers(self, workspace: Path, servers: Sequence[Any] | Mapping[str, Any], *,
                    owner: str, origin: Origin = "acp") -> list[str]:
        """Servers a client hands over (ACP ``session/new``: a list of ``{name, ...}``).

        ``owner`` (for example the ACP session id) lets :meth:`remove_servers` drop exactly
        these again; returns problems with the definitions (the rest are used).
        """
        if isinstance(servers, Mapping):
            defs, problems = parse_servers(dict(servers), origin)
        else:
            defs, problems = parse_acp_servers(list(servers))
            defs = [ServerDef(d.name, origin, d.config, d.raw, d.problem) for d in defs]
        sp = self.space(workspace)
        with self._lock:
            sp.extra[owner] = defs
        return problems

    def remove_servers(self, workspace: Path, owner: str) -> None:
        """Forget the servers ``owner`` added (their connections stop at the next sync)."""
        sp = self.space(workspace)
        with self._lock:
            sp.extra.pop(owner, None)

    def _file_defs(self, cache: _FileDefs, path: Path, origin: Origin) -> _FileDefs:
        try:
            st = path.stat()
            sig: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            sig = None
        if sig != cache.signature or (sig is None and cache.defs):
            if sig is None:
                cache.defs, cache.problems = [], []
            elif origin == "user":
                cache.defs, cache.problems = read_user_servers(path)
            else:
                cache.defs, cache.problems = read_json_servers(path, origin)
            cache.signature = sig
            for problem in cache.problems:
                log.warning("%s", problem)
        return cache

    def definitions(self, workspace: Path) -> dict[str, ServerDef]:
        """The effective definitions of a workspace, by server name."""
        sp = self.space(workspace)
        user = (self._file_defs(self._user, self._user_path, "user").defs
                if self._read_user else [])
        wsfile = self._file_defs(sp.file, sp.root / WORKSPACE_FILE, "workspace").defs
        with self._lock:
            editor = [d for defs in self._editor.values() for d in defs]
            extra = [d for defs in sp.extra.values() for d in defs]
        by_origin: dict[Origin, list[ServerDef]] = {"user": user, "workspace": wsfile,
                                                    "editor": editor, "acp": extra}
        return merge(*(by_origin[o] for o in ORIGIN_ORDER))

    def config_problems(self, workspace: Path) -> list[str]:
        """Problems found reading the configuration files and settings."""
        sp = self.space(workspace)
        return [*self._user.problems, *sp.file.problems, *self.problems]

    # -- trust -------------------------------------------------------------------------------

    def trust_book(self, workspace: Path) -> TrustBook:
        """The remembered trust answers of a workspace."""
        return self.space(workspace).trust

    def _book(self, sp: _Space, d: ServerDef) -> TrustBook:
        """Where the trust answer about a definition is kept."""
        return self.editor_trust if d.origin == "editor" else sp.trust

    async def revoke_trust(self, workspace: Path, server: str) -> bool:
        """Forget the trust answer about a server; a running one from ``.mcp.json`` or an
        editor's settings stops."""
        sp = self.space(workspace)
        d = self.definitions(workspace).get(server)
        changed = (self.editor_trust if d is not None and d.origin == "editor"
                   else sp.trust).revoke(server)
        conn = sp.connections.get(server)
        if changed and conn is not None and conn.definition.needs_trust:
            await self._loop.run(self._drop(sp, server))
        return changed

    async def _drop(self, sp: _Space, name: str) -> None:
        conn = sp.connections.pop(name, None)
        if conn is not None:
            await conn.stop()
        sp.tools = {k: v for k, v in sp.tools.items() if k[0] != name}

    async def _trusted(self, sp: _Space, defs: dict[str, ServerDef], approver: Approver | None,
                       session_id: str, turn_id: str,
                       mine: set[str] | None = None) -> dict[str, ServerDef]:
        """The definitions that may start: asks about new ``.mcp.json`` and editor-settings
        servers (once each; an editor's only of its own turns, ``mine``)."""
        usable: dict[str, ServerDef] = {}
        sp.blocked = {}
        for name, d in defs.items():
            if d.config is None:
                sp.blocked[name] = ("invalid", d.problem or "invalid definition")
                continue
            if not d.needs_trust:
                usable[name] = d
                continue
            decision = self._book(sp, d).decision(d.fingerprint)
            ours = d.origin != "editor" or mine is None or name in mine
            if decision is None and approver is not None and ours \
                    and d.fingerprint not in sp.asking:
                decision = await self._ask_trust(sp, d, approver, session_id, turn_id)
            if decision == "allow":
                usable[name] = d
            elif decision == "deny":
                sp.blocked[name] = ("denied", "you chose not to start this server from "
                                    f"{d.source}")
            else:
                sp.blocked[name] = ("untrusted", f"defined in {d.source}; it starts once "
                                    "you trust it (you are asked in a chat turn)")
        return usable

    async def _ask_trust(self, sp: _Space, d: ServerDef, approver: Approver, session_id: str,
                         turn_id: str) -> TrustDecision | None:
        sp.asking.add(d.fingerprint)
        try:
            request = PermissionRequest(
                session_id=session_id, turn_id=turn_id,
                tool_call=PermissionToolCall(
                    tool_call_id=f"{turn_id}:mcp-trust:{d.name}", name=f"mcp__{d.name}",
                    kind="execute",
                    title=f"Start MCP server {d.name!r} from {d.source}: {d.describe()}",
                    input={"server": d.name, "definition": d.raw, "file": d.source}),
                options=trust_options(), workspace=str(sp.root))
            outcome = await approver.request_permission(request)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("asking whether to trust MCP server %s failed", d.name)
            return None
        finally:
            sp.asking.discard(d.fingerprint)
        if outcome.outcome != "selected" or outcome.kind is None:
            return None
        decision: TrustDecision = "allow" if outcome.kind.startswith("allow") else "deny"
        self._book(sp, d).remember(d.name, d.fingerprint, decision, command=d.describe(),
                          persist=outcome.kind.endswith("always"))
        return decision

    # -- connections -------------------------------------------------------------------------

    async def _sync(self, sp: _Space, usable: dict[str, ServerDef], wait: bool) -> None:
        """Make the running connections match the usable definitions (on the MCP loop)."""
        # only a workspace with servers gets here: their connections (and the SDK) load now
        from openprogram_lsp.tools.mcp.connection import Connection

        for name in list(sp.connections):
            conn = sp.connections[name]
            want = usable.get(name)
            if want is None or want.fingerprint != conn.definition.fingerprint \
                    or want.origin != conn.definition.origin:
                await self._drop(sp, name)
        for name, d in usable.items():
            if name not in sp.connections:
                conn = sp.connections[name] = Connection(d, sp.root,
                                                         startup_timeout=self.startup_timeout)
                conn.on_tools_added = self._announcer(sp.root, name)
            sp.connections[name].start()
        if wait:
            pending = [c.wait_settled(self.startup_timeout) for c in sp.connections.values()
                       if c.state in ("stopped", "starting", "restarting")]
            if pending:
                await asyncio.gather(*pending)

    async def start(self, workspace: Path, *, approver: Approver | None = None,
                    session_id: str = "", turn_id: str = "", wait: bool = True,
                    editor_owner: str | None = None) -> None:
        """Start a workspace's servers now (an ACP session start), asking trust if needed
        (with ``editor_owner``: about editor-settings servers of that editor only)."""
        sp = self.space(workspace)
        defs = self.definitions(workspace)
        if not defs and not sp.connections:
            return
        usable = await self._trusted(sp, defs, approver, session_id, turn_id,
                                     self._editor_names(editor_owner))
        await self._loop.run(self._sync(sp, usable, wait))

    async def tools_for(self, workspace: Path, *, approver: Approver | None = None,
                        session_id: str = "", turn_id: str = "",
                        editor_owner: str | None = None) -> list[Tool]:
        """The MCP tools a turn in this workspace offers (servers started on first use).

        With ``editor_owner``, servers from editor settings count only when that editor
        defined them."""
        sp = self.space(workspace)
        await self.start(workspace, approver=approver, session_id=session_id, turn_id=turn_id,
                         editor_owner=editor_owner)
        mine = self._editor_names(editor_owner)
        out: list[Tool] = []
        seen: set[str] = set()
        for name, conn in list(sp.connections.items()):
            if conn.state != "ready":
                continue
            if mine is not None and conn.definition.origin == "editor" and name not in mine:
                continue  # another editor's server
            # a list_changed relisting still running: the turn offers the new listing
            await conn.wait_listed(RELIST_WAIT)
            key = (name, conn.generation)
            tools = sp.tools.get(key)
            if tools is None:
                from openprogram_lsp.tools.mcp.tool import make_tool  # a server is ready

                tools = []
                for info in conn.offer.tools:
                    tools.append(make_tool(name, info, self._caller(sp, name),
                                           conn.unconfirmed))
                sp.tools = {k: v for k, v in sp.tools.items() if k[0] != name}
                sp.tools[key] = tools
            for tool in tools:
                if tool.name in seen:
                    log.warning("MCP tool name %s is offered twice; the second is ignored",
                                tool.name)
                    continue
                seen.add(tool.name)
                out.append(tool)
        return out

    def _announcer(self, root: Path, server: str) -> Callable[[list[ToolInfo]], None]:
        def announce(added: list[ToolInfo]) -> None:
            listener = self.on_tools_added
            if listener is not None:
                listener(root, server, [
                    {"name": full_name(server, t.name), "tool": t.name, "kind": t.kind,
                     "description": t.description[:300]} for t in added])
        return announce

    def _caller(self, sp: _Space, name: str) -> Any:
        async def call(tool: str, arguments: dict[str, Any]) -> CallResult:
            conn = sp.connections.get(name)
            if conn is None:
                from openprogram_lsp.tools.mcp.catalog import McpCallError

                raise McpCallError(f"MCP server {name!r} is no longer configured")
            timeout = getattr(conn.definition.config, "timeout", None) or self.call_timeout
            return await self._loop.run(conn.call_tool(tool, arguments, timeout))
        return call

    async def restart(self, workspace: Path, server: str | None = None) -> list[str]:
        """Reconnect one server (or all of a workspace's); returns the names restarted."""
        sp = self.space(workspace)
        names = [server] if server is not None else list(sp.connections)

        async def go() -> list[str]:
            done = []
            for name in names:
                conn = sp.connections.get(name)
                if conn is not None:
                    await conn.restart()
                    done.append(name)
            for name in done:
                await sp.connections[name].wait_settled(self.startup_timeout)
            return done

        if not names:
            return []
        return await self._loop.run(go())

    # -- prompts and resources ---------------------------------------------------------------

    def prompts(self, workspace: Path) -> list[tuple[str, PromptInfo]]:
        """(server, prompt) of every ready server: the ``/mcp__server__prompt`` commands."""
        sp = self.space(workspace)
        return [(name, p) for name, c in list(sp.connections.items()) if c.state == "ready"
                for p in c.offer.prompts]

    def resources(self, workspace: Path) -> list[tuple[str, ResourceInfo]]:
        """(server, resource) of every ready server: what ``@server:uri`` can attach."""
        sp = self.space(workspace)
        return [(name, r) for name, c in list(sp.connections.items()) if c.state == "ready"
                for r in c.offer.resources]

    def _conn(self, workspace: Path, server: str) -> Connection:
        conn = self.space(workspace).connections.get(server)
        if conn is None:
            from openprogram_lsp.tools.mcp.catalog import McpCallError

            raise McpCallError(f"no MCP server named {server!r} is running in this workspace")
        return conn

    async def get_prompt(self, workspace: Path, server: str, prompt: str,
                         arguments: dict[str, str]) -> list[dict[str, Any]]:
        """A prompt's messages."""
        conn = self._conn(workspace, server)
        return await self._loop.run(conn.get_prompt(prompt, arguments, self.call_timeout))

    async def read_resource(self, workspace: Path, server: str, uri: str
                            ) -> list[dict[str, Any]]:
        """A resource's contents."""
        conn = self._conn(workspace, server)
        return await self._loop.run(conn.read_resource(uri, self.call_timeout))

    # -- status and shutdown -----------------------------------------------------------------

    def status(self, workspace: Path) -> list[dict[str, Any]]:
        """Every configured server: origin, transport, state, tools, last error (wire-ready)."""
        sp = self.space(workspace)
        defs = self.definitions(workspace)
        out = []
        for name, d in defs.items():
            conn = sp.connections.get(name)
            state: str
            if conn is not None and conn.definition.fingerprint == d.fingerprint:
                state, error = conn.state, conn.last_error
            elif name in sp.blocked:
                state, error = sp.blocked[name]
            elif d.config is None:
                state, error = "invalid", d.problem
            else:
                state, error = "stopped", None
            trust = None
            if d.needs_trust:
                trust = self._book(sp, d).decision(d.fingerprint) or "unknown"
            row: dict[str, Any] = {
                "name": name, "origin": d.origin,
                "transport": "stdio" if d.raw.get("type", "stdio") == "stdio"
                and "url" not in d.raw else "http",
                "target": d.describe(), "status": state, "trust": trust,
                "last_error": error, "restarts": conn.restarts if conn else 0,
                "tools": [], "prompts": [], "resources": []}
            if conn is not None and conn.state == "ready":
                row["tools"] = [{"name": full_name(name, t.name), "tool": t.name,
                                 "kind": t.kind, "description": t.description[:300]}
                                for t in conn.offer.tools]
                row["prompts"] = [{"name": p.name, "command": f"/{full_name(name, p.name)}",
                                   "description": p.description[:300],
                                   "arguments": [a.name for a in p.arguments]}
                                  for p in conn.offer.prompts]
                row["resources"] = [{"uri": r.uri, "name": r.name, "mime_type": r.mime_type,
                                     "reference": f"@{name}:{r.uri}"}
                                    for r in conn.offer.resources]
            if conn is not None and conn.stderr_tail:
                row["stderr"] = list(conn.stderr_tail)[-5:]
            out.append(row)
        return out

    async def aclose(self) -> None:
        """Stop every server (from any loop)."""
        if not self._loop.started:
            return

        async def stop_all() -> None:
            conns = [c for sp in list(self._spaces.values()) for c in sp.connections.values()]
            await asyncio.gather(*(c.stop() for c in conns), return_exceptions=True)
            for sp in self._spaces.values():
                sp.connections.clear()
                sp.tools.clear()

        try:
            await asyncio.wait_for(self._loop.run(stop_all()), 20)
        except (TimeoutError, RuntimeError):
            log.warning("MCP servers did not all stop in time")
        self._loop.stop()

    def shutdown(self) -> None:
        """Stop every server from synchronous code (not from the MCP loop)."""
        if not self._loop.started:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self.aclose())
            return
        raise RuntimeError("McpHub.shutdown() called from a running loop; await aclose()")
