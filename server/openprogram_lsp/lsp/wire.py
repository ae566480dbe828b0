"""The wire schema: pydantic models (camelCase aliases) for every custom request, result and event.

Params models validate what editors send; result models document and dump what the server
answers. Domain models that already speak the wire (TurnResult, Node, Checkpoint,
PermissionRequest) come from ``core.types``.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from openprogram_lsp.core.errors import InvalidParams
from openprogram_lsp.core.types import (
    Checkpoint,
    McpSource,
    Node,
    PermissionRequest,
    PlanEntry,
    ToolKind,
    TurnResult,
    TurnStatus,
    Wire,
)

P = TypeVar("P", bound=BaseModel)


class Params(BaseModel):
    """Base of request params: camelCase on the wire, unknown fields ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore",
                              defer_build=True)


class Result(Wire):
    """Base of results and event payloads."""

    def wire(self) -> dict[str, Any]:
        """Dump as camelCase JSON-ready dict (None fields left out, but ``WIRE_KEEPS_NULL``)."""
        out = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        for key in self.WIRE_KEEPS_NULL:
            out.setdefault(key, None)
        return out


# -- client -> server params -------------------------------------------------------------------

MAX_PATH = 4096
"""Longest path a request may name (PATH_MAX on Linux)."""


MAX_ATTACHMENT_TEXT = 512 * 1024
"""Longest text one attachment may carry (characters)."""


class WirePosition(Params):
    """An LSP position (0-based line, UTF-16 character)."""

    line: int = Field(ge=0, le=10_000_000)
    character: int = Field(ge=0, le=10_000_000)


class WireRange(Params):
    """An LSP range."""

    start: WirePosition
    end: WirePosition


class DiagnosticItem(Params):
    """One diagnostic of an attachment, as the editor has it (LSP ``Diagnostic`` fields)."""

    range: WireRange
    message: str = Field(max_length=20_000)
    severity: int | None = Field(None, ge=1, le=4)
    source: str | None = Field(None, max_length=200)
    code: str | int | None = None


MAX_IMAGE_DATA = 28 * 1024 * 1024
"""Longest base64 text of one image attachment (a 20 MB image)."""


class ContextItem(Params):
    """What the user points the agent at: a file, a selection, diagnostics, a symbol, the
    references of one (``text``: the editor's list of them) or an image (``data`` in base64, or
    the image file ``uri`` names, read by the server)."""

    kind: Literal["file", "selection", "diagnostics", "symbol", "references", "image"]
    uri: str = Field(min_length=1, max_length=MAX_PATH + 100)
    range: WireRange | None = None
    text: str | None = Field(None, max_length=MAX_ATTACHMENT_TEXT,
                             description="The content; absent: the server reads it")
    diagnostics: list[DiagnosticItem] | None = Field(None, max_length=500)
    name: str | None = Field(None, max_length=500, description="A symbol's name (symbol, "
                             "references); an image's name as shown (default: the uri's last "
                             "part)")
    data: str | None = Field(None, max_length=MAX_IMAGE_DATA,
                             description="An image's bytes in base64 (a pasted image); absent: "
                                         "the server reads the file. PNG, JPEG, GIF or WebP, "
                                         "judged from the bytes")
    media_type: str | None = Field(None, max_length=100,
                                   description="What the client thinks the image is; the bytes "
                                               "decide")


class ChatParams(Params):
    """``openprogram/chat``: a user message; a new session when ``sessionId`` is absent."""

    text: str = Field(min_length=1, description="The user's message")
    session_id: str | None = Field(None, min_length=1, description="Continue this session")
    branch_from: str | None = Field(
        "inherit", description='"inherit" (default), null for a new root, or a node id to fork at')
    model: str | None = Field(None, max_length=1000,
                              description="offline, scripted:FILE, openai:M, anthropic:M")
    client_turn_id: str | None = Field(
        None, max_length=200, description="Echoed in turn.started so a client can match its turn")
    context: list[ContextItem] | None = Field(
        None, max_length=64, description="Attachments rendered before the message")
    rules: Literal["inherit", "reset", "copy"] = Field(
        "inherit", description="With a node id in branchFrom: the fork's session rules "
                               "(inherit: shared with the parent branch; reset: none; copy: "
                               "a snapshot of them, its own from then on)")


class ForkParams(Params):
    """``openprogram/fork``: a new branch answering ``text`` after ``fromNodeId``."""

    session_id: str = Field(min_length=1, max_length=200)
    from_node_id: str | None = Field(min_length=1, max_length=200,
                                     description="Fork after this node; null for a new root")
    text: str = Field(min_length=1)
    name: str | None = Field(None, min_length=1, max_length=200)
    client_turn_id: str | None = Field(
        None, max_length=200, description="Echoed in turn.started so a client can match its turn")
    restore_code: bool = Field(
        False, description="Start from the code state of fromNodeId (restored first, undoable)")
    keep_paths: list[Annotated[str, Field(min_length=1, max_length=MAX_PATH)]] | None = Field(
        None, max_length=10_000,
        description="With restoreCode: workspace files the restore leaves as they are (the user's "
                    "own changes); listed in the result's skipped")
    context: list[ContextItem] | None = Field(
        None, max_length=64, description="Attachments rendered before the message")
    model: str | None = Field(None, max_length=1000,
                              description="The fork's model, as in chat (offline, scripted:FILE, "
                                          "openai:M, anthropic:M); absent: the server's")
    rules: Literal["inherit", "reset", "copy"] = Field(
        "inherit", description="The fork's session rules: inherit (shared with the parent "
                               "branch), reset (none: its calls ask again), copy (a snapshot, "
                               "its own from then on)")


class SessionParams(Params):
    """Params naming one session (cancel, branches)."""

    session_id: str = Field(min_length=1, max_length=200)


class SubscribeParams(SessionParams):
    """``openprogram/subscribe``: receive the events of a session (whoever drives it)."""

    replay: bool = Field(False, description="First send this editor what the session's running "
                         "turn streamed so far (events marked replayed, before any later event)")


class SteerParams(Params):
    """``openprogram/steer``: interject into the running turn."""

    session_id: str = Field(min_length=1, max_length=200)
    text: str = Field(min_length=1)


class EmptyParams(Params):
    """Params of methods that take none (``{}`` or absent)."""


class SessionsParams(Params):
    """``openprogram/sessions``: one page of sessions, newest first, optionally one folder's."""

    limit: int | None = Field(None, ge=1, le=10_000, strict=True,
                              description="At most this many sessions")
    offset: int = Field(0, ge=0, strict=True, description="Skip this many (newest first)")
    workspace: str | None = Field(None, min_length=1, max_length=MAX_PATH,
                                  description="Only sessions working in this folder")


HISTORY_PAGE = 200
"""Nodes ``openprogram/history`` returns when no ``limit`` is given."""
HISTORY_MAX = 1000
"""Nodes one ``openprogram/history`` answer holds at most, whatever its ``limit`` (``hasMore``
then says older ones remain): a page is built and sent in bounded memory."""


class HistoryParams(Params):
    """``openprogram/history``: one branch, root to head, a page at a time."""

    session_id: str = Field(min_length=1, max_length=200)
    head_id: str | None = Field(None, min_length=1)
    limit: int = Field(HISTORY_PAGE, ge=1, le=10_000, strict=True,
                       description="At most this many nodes: the newest ones before "
                                   "beforeNodeId (the server sends 1,000 at most; hasMore)")
    before_node_id: str | None = Field(
        None, min_length=1, max_length=200,
        description="Return the nodes just before this one (the oldest node of the last page)")


class CheckoutParams(Params):
    """``openprogram/checkout``: move the session head."""

    session_id: str = Field(min_length=1, max_length=200)
    head_id: str = Field(min_length=1, max_length=200)
    restore_code: bool = Field(
        False, description="Also restore the workspace to the branch's code state (undoable)")
    keep_paths: list[Annotated[str, Field(min_length=1, max_length=MAX_PATH)]] | None = Field(
        None, max_length=10_000,
        description="With restoreCode: workspace files the switch leaves as they are (the user's "
                    "own changes); listed in the result's skipped")


class BranchDiffParams(Params):
    """``openprogram/branchDiff``: compare two branches' code states."""

    session_id: str = Field(min_length=1, max_length=200)
    from_head_id: str = Field(min_length=1, max_length=200)
    to_head_id: str = Field(min_length=1, max_length=200)
    path: str | None = Field(None, min_length=1, max_length=MAX_PATH)


class FilesParams(Params):
    """``openprogram/files``: workspace files matching a fuzzy query (@-mention completion)."""

    query: str = Field("", max_length=500)
    limit: int = Field(50, ge=1, le=500)


class ImageParams(Params):
    """``openprogram/image``: a stored image's bytes, by the hash its record names."""

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="From an image record "
                        "(metadata.context[i].sha256, toolCalls[i].images[j].sha256)")


class ImageResult(Result):
    media_type: str
    data: str = Field(description="The image's bytes in base64")


class FileEntry(Result):
    path: str = Field(description="Relative to the workspace folder, with /")
    uri: str


class FilesResult(Result):
    files: list[FileEntry]
    total: int = Field(description="How many files matched (the first 2,000 are ranked)")


class CommandInfo(Result):
    name: str
    description: str
    source: Literal["builtin", "workspace", "user"]
    kind: Literal["builtin", "custom"]
    argument_hint: str | None = None
    path: str | None = None


class CommandsResult(Result):
    commands: list[CommandInfo]


class BlameParams(Params):
    """``openprogram/blame``: who last changed each line of a document."""

    uri: str = Field(min_length=1, max_length=MAX_PATH + 64)


class NameBranchParams(Params):
    """``openprogram/nameBranch``: name the branch ending at ``headId``."""

    session_id: str = Field(min_length=1, max_length=200)
    head_id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=200)


class AnswerParams(Params):
    """``openprogram/answer``: answer a pending agent question."""

    question_id: str = Field(min_length=1, max_length=200)
    answer: str


class OptionalSessionParams(Params):
    """Params with an optional session filter (checkpoints, agents)."""

    session_id: str | None = Field(None, min_length=1)


class RulesParams(Params):
    """``openprogram/rules``: the standing rules of the workspace folders (and of one session)."""

    session_id: str | None = Field(None, min_length=1, max_length=200,
                                   description="Also list this session's rules (default: all)")
    workspace: str | None = Field(None, min_length=1, max_length=MAX_PATH,
                                  description="Only this workspace folder (default: every one)")
    records: bool = Field(False, description="Also list the session's approval records, read "
                                             "from its store (needs sessionId)")
    cursor: str | None = Field(None, min_length=1, max_length=40,
                               description="nextCursor of the previous page of records")
    limit: int = Field(200, ge=1, le=1000, description="Records per page")


class RevokeRuleParams(Params):
    """``openprogram/revokeRule``: forget one rule, at once."""

    rule_id: str = Field(min_length=1, max_length=200)
    workspace: str | None = Field(None, min_length=1, max_length=MAX_PATH,
                                  description="The folder the rule belongs to (default: any)")


class CheckpointDiffParams(Params):
    """``openprogram/checkpointDiff``: a checkpoint's diff, optionally for one path."""

    checkpoint_id: str = Field(min_length=1, max_length=200)
    path: str | None = Field(None, min_length=1, max_length=MAX_PATH)


class RenameSessionParams(Params):
    """``openprogram/renameSession``: give a session a new title."""

    session_id: str = Field(min_length=1, max_length=200)
    title: str = Field(min_length=1, max_length=200)


class RestoreHunkParams(Params):
    """``openprogram/restoreHunk``: undo one hunk of a checkpoint's change to a file."""

    checkpoint_id: str = Field(min_length=1, max_length=200)
    path: str = Field(min_length=1, max_length=4096)
    hunk: int = Field(ge=0, description="Index into files[].hunks of checkpointDiff")


class RestoreParams(Params):
    """``openprogram/restore``: restore a checkpoint (all files or some), or with ``undo``
    return a turn's files to how they were before that turn."""

    checkpoint_id: str = Field(min_length=1, max_length=200)
    paths: list[Annotated[str, Field(min_length=1, max_length=MAX_PATH)]] | None = Field(
        None, max_length=100_000)
    undo: bool = False


# -- results -----------------------------------------------------------------------------------

class FileChange(Result):
    path: str = Field(description="Workspace-relative, '/'-separated")
    change: Literal["added", "modified", "deleted"]


class NotRestoredFile(Result):
    """A path a restore (or undo) left as it is."""

    path: str = Field(description="Workspace-relative, '/'-separated (a directory ends in '/')")
    reason: str = Field(description="Why, for people")


class CancelResult(Result):
    cancelled: bool


class AcceptedResult(Result):
    accepted: bool


class SubscribeResult(Result):
    """``openprogram/subscribe``: where the session is now (a turn may be running)."""

    session_id: str
    head_id: str | None = None
    running_turn_id: str | None = None


class SessionInfo(Result):
    id: str
    title: str = ""
    head_id: str | None = None
    status: str = "idle"
    updated_at: str = ""
    workspace: str | None = Field(None, description="The folder the session works in")


class SessionsResult(Result):
    sessions: list[SessionInfo]
    total: int = Field(0, description="Sessions matching the filter, on every page")
    has_more: bool = Field(False, description="More sessions after this page")


class HistoryNode(Node):
    """A node of ``openprogram/history``: ``predecessor`` and ``caller`` always present."""

    WIRE_KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"predecessor", "caller"})
    model_config = ConfigDict(from_attributes=True)

    attachments: list[Node] | None = Field(
        None, description="Replies from subagents and other branches hanging off this node")


class HistoryResult(Result):
    WIRE_KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"headId"})

    session_id: str
    head_id: str | None
    nodes: list[HistoryNode]
    has_more: bool = Field(False, description="Older nodes remain before the first one listed")

    def wire(self) -> dict[str, Any]:
        """Keep ``headId: null`` for an empty session and ``hasMore`` always."""
        out = super().wire()
        out.setdefault("headId", None)
        out["hasMore"] = self.has_more
        return out


class BranchInfo(Result):
    head_id: str
    name: str | None = None
    active: bool
    length: int
    preview: str = ""
    fork_id: str | None = Field(
        None, description="First node of the branch's own part: a stable id (none: the main line)")
    forked_from: str | None = Field(None, description="The node the branch continues after")
    started_at: str | None = Field(None, description="When the branch's own part began")
    start_preview: str | None = Field(None, description="First line of its first own message")
    code_checkpoint_id: str | None = Field(
        None, description="The branch's code state: the checkpoint of its newest turn")
    code_differs: bool | None = Field(
        None, description="Whether that state differs from the workspace's newest checkpoint")


class BranchesResult(Result):
    branches: list[BranchInfo]


class CheckoutResult(Result):
    head_id: str
    previous_head_id: str | None = Field(None, description="The head before (to undo a switch)")
    code_checkpoint_id: str | None = Field(
        None, description="restoreCode: the checkpoint the workspace was restored to")
    restored: list[str] | None = Field(None, description="restoreCode: the files written")
    safety_checkpoint_id: str | None = Field(
        None, description="restoreCode: restore this to undo the switch's file changes")
    conflicts: list[str] | None = Field(
        None, description="Files another process changed during the switch (left as they are)")
    skipped: list[str] | None = None


class EmptyResult(Result):
    """An empty object."""


class CheckpointsResult(Result):
    checkpoints: list[Checkpoint]


class DiffHunk(Result):
    """One run of changed lines (1-based starts, as in a unified diff)."""

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int


class DiffFile(Result):
    path: str
    status: Literal["added", "modified", "deleted"]
    before: str | None = None
    after: str | None = None
    binary: bool | None = None
    truncated: bool | None = None
    hunks: list[DiffHunk] | None = Field(
        None, description="Changed runs of a text file; openprogram/restoreHunk takes an index")


class CheckpointDiffResult(Result):
    checkpoint_id: str
    diff: str
    files: list[DiffFile]


class RestoreResult(Result):
    """``openprogram/restore`` and ``restoreHunk``: what was written, and how to undo it."""

    WIRE_KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"safetyCheckpointId"})

    restored: list[str]
    safety_checkpoint_id: str | None = Field(
        description="The checkpoint of the state before (restore it to undo); null: none needed")
    changes: list[FileChange] = Field(default_factory=list,
                                      description="Each written file and how it changed")
    checkpoint_id: str | None = Field(None, description="The checkpoint the restore made")
    undone_checkpoint_id: str | None = Field(None, description="With undo: the turn undone")
    restored_from_checkpoint_id: str | None = Field(
        None, description="With undo: the checkpoint the files came back to")
    conflicts: list[str] | None = Field(
        None, description="Files another process changed during the restore (left as they are)")
    skipped: list[str] | None = Field(None, description="The paths of notRestored")
    not_restored: list[NotRestoredFile] | None = Field(
        None, description="Paths left as they are, each with why: files a checkpoint could not "
                          "record (over checkpoints.max_file_bytes, unreadable, a FIFO, socket "
                          "or device), or something unrecorded in the way")


class BlameToolCall(Result):
    id: str
    name: str
    title: str | None = None


class BlameHunk(Result):
    """Consecutive lines last changed by the same checkpoint."""

    start_line: int = Field(description="0-based, as LSP positions")
    line_count: int
    kind: Literal["agent", "user", "base", "unrecorded"] = Field(
        description="agent: a turn; user: outside the agent; base: before the first checkpoint; "
                    "unrecorded: changed since the newest checkpoint")
    checkpoint_id: str | None = None
    checkpoint_kind: str | None = None
    created_at: str | None = None
    session_id: str | None = None
    turn_id: str | None = Field(None, description="The assistant node of the turn")
    turn: int | None = Field(None, description="1-based number of the turn on its branch")
    prompt: str | None = Field(None, description="First line of the turn's user message")
    branch: str | None = Field(None, description="Name of the branch holding the turn")
    branch_head_id: str | None = None
    tool_call: BlameToolCall | None = None
    approval: dict[str, Any] | None = Field(
        None, description="{by: user|rule|mode|bypass|hook, decidedAt, mode, rule?, optionId?, "
        "option?, acceptedHunks?, hunks?, event?, rewrittenBy?, originalInput?}")


class BlameResult(Result):
    uri: str
    path: str | None = None
    hunks: list[BlameHunk] = Field(
        description="Empty when blame is off or the agent never changed the file")


class BranchDiffResult(Result):
    session_id: str
    from_head_id: str
    to_head_id: str
    from_checkpoint_id: str
    to_checkpoint_id: str
    diff: str = Field(description="Unified diff from the from-branch's code to the to-branch's")
    files: list[DiffFile]


class AgentInfo(Result):
    """One subagent run or send_message delivery (this process's jobs and stored children)."""

    id: str
    session_id: str
    head_id: str | None = None
    label: str | None = None
    status: Literal["running", "done", "error", "cancelled", "truncated", "refused"]
    kind: Literal["agent", "message", "reply"] = Field(
        description="agent: a subagent run; message: a send_message delivery; reply: a follow-up")
    created_at: str
    queued: bool | None = Field(None, description="Waiting behind other work on its branch")
    error: str | None = None
    parent_session_id: str | None = Field(None, description="The session that started it")
    parent_turn_id: str | None = Field(None, description="The turn that started it")


class AgentDefinitionInfo(Result):
    """An agent definition usable as the agent tool's ``agent``."""

    id: str
    name: str
    description: str = ""
    source: str
    scope: Literal["user", "workspace"]
    tools: list[str] | None = None
    disallowed_tools: list[str] = Field(default_factory=list)
    model: str | None = None
    permission_mode: str | None = None
    trust: Literal["trusted", "rejected", "unknown"]


class AgentsResult(Result):
    agents: list[AgentInfo]
    definitions: list[AgentDefinitionInfo] = Field(default_factory=list)


class HookResultInfo(Result):
    """A hook's last run."""

    exit_code: int | None
    duration_ms: float
    timed_out: bool
    at: float
    outcome: str
    error: str | None = None
    stderr: str | None = None


class HookInfo(Result):
    """One hook definition, its trust and its last result."""

    id: str
    event: str
    matcher: str
    command: str
    timeout: float
    critical: bool
    source: str
    scope: Literal["user", "workspace"]
    trust: Literal["trusted", "rejected", "unknown"]
    active: bool
    last_result: HookResultInfo | None = None
    type: Literal["command", "http", "prompt", "agent"] = Field(
        "command", description="What the hook runs: a shell command, an HTTP POST to the URL in "
                               "command, or a model's judgement with the prompt in command")
    background: bool = Field(False, description="An async hook: it never holds a turn up")


class HooksResult(Result):
    hooks: list[HookInfo]
    warnings: list[str] = Field(default_factory=list)


class TrustParams(Params):
    """``openprogram/trust``: trust, reject or forget a workspace hook or agent definition."""

    id: str = Field(min_length=1, max_length=64)
    decision: Literal["trust", "reject", "forget"]


class TrustResult(Result):
    id: str
    trust: Literal["trusted", "rejected", "unknown"]


# -- MCP servers ------------------------------------------------------------------------------

class McpRestartParams(Params):
    """``openprogram/mcpRestart``: reconnect one server, or every server when absent."""

    server: str | None = Field(None, min_length=1, max_length=200)


class McpRevokeTrustParams(Params):
    """``openprogram/mcpRevokeTrust``: forget the trust answer about a ``.mcp.json`` server."""

    server: str = Field(min_length=1, max_length=200)


class McpToolInfo(Result):
    name: str = Field(description="The registry name, mcp__<server>__<tool>")
    tool: str = Field(description="The tool's name on its server")
    kind: ToolKind
    description: str = ""


class McpPromptInfo(Result):
    name: str
    command: str = Field(description="The slash command, /mcp__<server>__<prompt>")
    description: str = ""
    arguments: list[str] = Field(default_factory=list)


class McpResourceInfo(Result):
    uri: str
    name: str
    mime_type: str | None = None
    reference: str = Field(description="What to write in a message to attach it: @server:uri")


class McpServerInfo(Result):
    name: str
    origin: Literal["user", "workspace", "editor", "acp"]
    transport: Literal["stdio", "http"]
    target: str = Field(description="The command line or URL")
    status: Literal["stopped", "starting", "ready", "restarting", "failed", "untrusted",
                    "denied", "invalid"]
    trust: Literal["allow", "deny", "unknown"] | None = Field(
        None, description="For .mcp.json servers: the remembered trust answer")
    last_error: str | None = None
    restarts: int = 0
    tools: list[McpToolInfo] = Field(default_factory=list)
    prompts: list[McpPromptInfo] = Field(default_factory=list)
    resources: list[McpResourceInfo] = Field(default_factory=list)
    stderr: list[str] | None = Field(None, description="The last lines the server wrote to stderr")


class McpTrustInfo(Result):
    server: str
    decision: Literal["allow", "deny"]
    created_at: str
    command: str


class McpResult(Result):
    """``openprogram/mcp``: the workspace's servers, remembered trust and config problems."""

    workspace: str
    servers: list[McpServerInfo]
    trust: list[McpTrustInfo] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


class McpRestartResult(Result):
    restarted: list[str]
    servers: list[McpServerInfo]


class McpRevokeTrustResult(Result):
    revoked: bool


class RuleInfo(Result):
    """One standing rule: what it covers, its scope, and where it came from."""

    id: str
    decision: Literal["allow", "deny"]
    kind: Literal["command", "edit", "call", "tool", "pattern", "host"] = Field(
        description="command: one exact simple command; edit: a file, folder or every edit; "
                    "call: one exact call; tool: every call of one MCP server's tool; "
                    "pattern: an fnmatch pattern from settings; host: every fetch from one "
                    "host (value: host, or host:port)")
    tool: str
    value: str | None = None
    edit_scope: Literal["file", "folder", "workspace"] | None = None
    scope: Literal["session", "workspace"]
    session_id: str | None = None
    branch: str | None = Field(None, description="A session rule made on a reset or copy fork: "
                                                 "the fork's first node (its rules scope)")
    origin: Literal["prompt", "settings", "legacy"]
    created_at: str = ""
    tool_call_id: str | None = None
    turn_id: str | None = None
    description: str = ""
    revocable: bool = True
    workspace: str | None = Field(None, description="The workspace folder whose rule it is "
                                                    "(null: a settings rule, every folder)")


class ApprovalRecordInfo(Result):
    """How one tool call of a session was let through, as its assistant node stores it."""

    by: Literal["user", "rule", "mode", "bypass", "hook"]
    decided_at: str = ""
    mode: str | None = None
    option: str | None = Field(None, description="The option the user chose (by: user)")
    rule_id: str | None = Field(None, description="The rule that allowed it (by: rule)")
    rule_ids: list[str] = Field(default_factory=list,
                                description="Every rule (one per part of a compound command)")
    tool_call_id: str
    tool: str
    title: str | None = None
    turn_id: str = Field(description="The assistant node of the call")
    branch_head_id: str | None = Field(None, description="A branch tip holding the turn")
    branch: str | None = Field(None, description="That branch's name, when named")


class RulesResult(Result):
    rules: list[RuleInfo]
    records: list[ApprovalRecordInfo] | None = Field(
        None, description="With records: the session's approval records, oldest first")
    next_cursor: str | None = Field(None, description="More records: pass it as cursor")


class RevokeRuleResult(Result):
    revoked: RuleInfo


# -- server -> client --------------------------------------------------------------------------

class PermissionResponse(Params):
    """The editor's answer to ``openprogram/requestPermission``."""

    outcome: Literal["selected", "cancelled"]
    option_id: str | None = None
    accepted_hunks: list[Annotated[int, Field(strict=True, ge=0)]] | None = Field(
        None, max_length=100_000,
        description="With an allow option: apply only these hunks (indices into "
        "toolCall.diff.hunks); [] rejects the edit; absent: the whole edit")


class AskQuestionParams(Result):
    """``openprogram/askQuestion`` params (also the ``question.asked`` event)."""

    session_id: str | None = None
    turn_id: str | None = None
    question_id: str
    question: str
    options: list[str] | None = None
    allow_free_text: bool = True


class AskQuestionResponse(Params):
    """The editor's answer to ``openprogram/askQuestion``: an answer, or cancelled."""

    answer: str | None = None
    cancelled: bool = False


class DiagnosticsParams(Result):
    """``openprogram/diagnostics``: the server asks for the diagnostics the editor's language
    servers publish for some files (sent only to clients declaring
    ``experimental.openprogram.diagnostics``)."""

    uris: list[str] = Field(description="The files (``file:`` uris); the editor loads a file "
                                        "no buffer holds yet")
    settle_ms: int = Field(description="Answer once no diagnostics changed for this long (0: "
                                       "at once, unless the file had to be loaded)")
    timeout_ms: int = Field(description="Answer by then whatever the servers are doing")


def _lua_list(value: Any) -> Any:
    """Lua encodes an empty table as ``{}``: an empty list."""
    return [] if value == {} else value


LuaList = BeforeValidator(_lua_list)


class FileDiagnostics(Params):
    """One file's diagnostics in a ``openprogram/diagnostics`` answer."""

    uri: str = Field(max_length=MAX_PATH + 16)
    diagnostics: Annotated[list[DiagnosticItem], LuaList] = Field(default_factory=list,
                                                                  max_length=2000)


class DiagnosticsResponse(Params):
    """The editor's answer to ``openprogram/diagnostics`` (its own diagnostics left out)."""

    files: Annotated[list[FileDiagnostics], LuaList] = Field(default_factory=list,
                                                             max_length=100)


NavigationKind = Literal["definition", "references", "hover", "documentSymbols",
                         "workspaceSymbols"]


class NavigateParams(Result):
    """``openprogram/navigate``: the server asks the editor's language servers a navigation
    question (sent only to clients declaring ``experimental.openprogram.navigation``)."""

    kind: NavigationKind
    uri: str | None = Field(None, description="The file (all but workspaceSymbols)")
    position: dict[str, int] | None = Field(
        None, description="LSP position {line, character} (definition, references, hover)")
    query: str | None = Field(None, description="What to look for (workspaceSymbols)")
    timeout_ms: int = Field(description="Answer by then with what the servers gave")


class NavLocation(Params):
    """A place a language server named (``Location``; ``LocationLink`` as its target)."""

    uri: str = Field(max_length=MAX_PATH + 16)
    range: WireRange


class NavSymbol(Params):
    """A symbol (``DocumentSymbol``, flattened, or ``SymbolInformation``)."""

    name: str = Field(max_length=1000)
    kind: int = Field(ge=1, le=30)
    uri: str | None = Field(None, max_length=MAX_PATH + 16)
    range: WireRange
    container: str | None = Field(None, max_length=1000)


class NavigateResponse(Params):
    """The editor's answer to ``openprogram/navigate`` (its own client left out)."""

    locations: Annotated[list[NavLocation], LuaList] = Field(default_factory=list,
                                                             max_length=5000)
    symbols: Annotated[list[NavSymbol], LuaList] = Field(default_factory=list, max_length=5000)
    hover: str | None = Field(None, max_length=200_000)
    servers: Annotated[list[str], LuaList] = Field(
        default_factory=list, max_length=50, description="The language servers that answered")


class EventNotification(Result):
    """``openprogram/event``: one event of the bus (``sessionId`` null: a workspace event)."""

    WIRE_KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"sessionId"})

    type: str
    session_id: str | None
    turn_id: str | None = None
    data: dict[str, Any]
    replayed: bool | None = Field(None, description="Sent by openprogram/subscribe with replay: "
                                  "what the running turn streamed before this editor subscribed")
    replay_truncated: bool | None = Field(None, description="On a replayed turn.started: the "
                                          "turn streamed more than is kept; its deltas are cut")


# -- event payloads (``data``), for the schema and the docs --------------------------------------

class TextDeltaData(Result):
    """The next piece of the reply."""

    text: str


class ThoughtDeltaData(Result):
    """The next piece of the model's reasoning (extended thinking, ``reasoning_content``):
    shown collapsed, never part of the reply's text; stored in the reply's
    ``metadata.thoughts``."""

    text: str


class ToolStartedData(Result):
    """A tool call is about to run (approval may still be asked)."""

    tool_call_id: str
    name: str
    kind: ToolKind
    title: str
    input: dict[str, Any]
    mcp: McpSource | None = Field(None, description="Set when an MCP server's tool runs")


class ToolFinishedData(Result):
    """A tool call ended; editors show ``blockedReason`` on the card."""

    tool_call_id: str
    status: Literal["completed", "failed"]
    output: str
    blocked_reason: str | None = Field(None, description="Why a tool gate (a hook, a policy), "
                                       "admission, the mode or a rule refused the call")
    cancelled: bool | None = Field(None, description="True: the turn's cancel cut the call "
                                   "while it ran or waited for approval")


class ToolOutputData(Result):
    """The next piece of a running command's output (``run_command``), as it comes."""

    tool_call_id: str
    text: str = Field(description="Batched (about 50 ms or 8 KiB); at most 64 KiB per call are "
                      "streamed, then a note; tool.finished carries the whole output")


class PlanUpdatedData(Result):
    """The agent's to-do list, replaced whole (``todo_write``): show it as a checklist. On
    re-attach the latest plan is the input (``todos``) of the branch's last completed
    ``todo_write`` call in the history."""

    entries: list[PlanEntry]


class FileChangedData(Result):
    """Files of a watched workspace folder changed (any process); ``sessionId`` is null."""

    changes: list[FileChange]
    root: str | None = Field(None, description="The workspace folder the paths are relative to")


class QuestionRepliedData(Result):
    """A question was answered."""

    question_id: str
    answer: str


class QuestionRejectedData(Result):
    """A question ended without an answer."""

    question_id: str
    reason: str = Field(description="timeout, dismissed or cancelled")


class TurnStartedData(Result):
    """A turn began: its user node is written, the reply node is running."""

    user_node_id: str
    assistant_node_id: str
    text: str
    source: str = Field(description="user, cli, agent_spawn, send_message, follow_up, ...")
    predecessor: str | None = Field(description="The node the user message follows (null: root)")
    client_turn_id: str | None = Field(None, description="The chat/fork request's clientTurnId")
    agent_id: str | None = Field(None, description="A subagent's turn: its agentId, as in "
                                 "subagent.started (editors show its stream apart)")

    WIRE_KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"predecessor"})


class EventData(Result):
    """Base of payloads the server builds as dicts: a nullable field may also be null."""

    WIRE_MAY_BE_NULL: ClassVar[bool] = True


class ContextCompactedData(EventData):
    """The context was snipped or summarised to fit the model's window."""

    tokens_before: int
    tokens_after: int
    path: str = Field(description="snip, microcompact, compact, structural or manual")
    context_window: int
    snipped: int
    summarised: int
    replaced: int
    summary_node_id: str | None = None
    summarizer_error: str | None = None


class ContextUsageData(EventData):
    """After each context preparation: the budget a turn's model call starts with."""

    used_tokens: int
    window_tokens: int
    compactions: int = Field(description="Summaries on the branch so far")
    path: str = Field(description="How the context was prepared")


class CompactionRecommendedData(EventData):
    """After a turn that used most of the window: compacting now is advised."""

    usage_ratio: float = Field(description="Tokens used / the context window")
    context_window: int


class BranchMessageSentData(EventData):
    """A send_message delivery was queued (kind message) or its reply came back (kind reply)."""

    from_: str = Field(alias="from", description="SESSION:NODE of the sender")
    to: str = Field(description="SESSION:NODE (or label) of the receiver")
    kind: Literal["message", "reply"]
    delivery_id: str
    to_label: str | None = None
    queued: bool | None = None
    preview: str | None = None
    in_turn: bool | None = Field(None, description="Replies: taken by the running turn")


class SubagentData(EventData):
    """``subagent.started`` / ``subagent.ended``: a child run on its own branch."""

    agent_id: str
    kind: Literal["agent", "message"]
    label: str | None = None
    parent_session_id: str | None = None
    parent_turn_id: str | None = None
    branch_from: str | None = None
    status: TurnStatus | None = Field(None, description="subagent.ended only")
    head_id: str | None = Field(None, description="subagent.ended: the child's branch tip")
    checkpoint_id: str | None = None
    error: str | None = None


class PermissionWithdrawnData(EventData):
    """An approval prompt timed out or its turn was cancelled: close it."""

    tool_call_id: str
    reason: str


class PermissionResolvedData(EventData):
    """How an approval ended (sent to every subscriber)."""

    tool_call_id: str
    outcome: Literal["selected", "cancelled"]
    option_id: str | None = None
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"] | None = None
    reason: str | None = None
    accepted_hunks: list[int] | None = Field(
        None, description="The hunks the user accepted (absent: the whole edit)")


class RulesChangedData(EventData):
    """A rule was made from a prompt or revoked: refresh a rules view."""

    action: Literal["added", "revoked"]
    rule_ids: list[str]
    tool_call_id: str | None = Field(None, description="The prompt the rules came from")
    workspace: str | None = Field(None, description="The workspace folder of the rules")


class McpToolsAddedData(EventData):
    """A running MCP server added tools after it was trusted: each asks before its first
    call, whatever its annotations, mode and rules say."""

    workspace: str
    server: str
    tools: list[McpToolInfo]


class PermissionCardData(PermissionRequest):
    """``permission.requested``: another editor's approval, shown read-only."""

    read_only: bool = True


REQUESTS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "openprogram/chat": (ChatParams, TurnResult),
    "openprogram/fork": (ForkParams, TurnResult),
    "openprogram/cancel": (SessionParams, CancelResult),
    "openprogram/steer": (SteerParams, AcceptedResult),
    "openprogram/sessions": (SessionsParams, SessionsResult),
    "openprogram/history": (HistoryParams, HistoryResult),
    "openprogram/branches": (SessionParams, BranchesResult),
    "openprogram/checkout": (CheckoutParams, CheckoutResult),
    "openprogram/nameBranch": (NameBranchParams, EmptyResult),
    "openprogram/answer": (AnswerParams, AcceptedResult),
    "openprogram/checkpoints": (OptionalSessionParams, CheckpointsResult),
    "openprogram/checkpointDiff": (CheckpointDiffParams, CheckpointDiffResult),
    "openprogram/restore": (RestoreParams, RestoreResult),
    "openprogram/agents": (OptionalSessionParams, AgentsResult),
    "openprogram/renameSession": (RenameSessionParams, EmptyResult),
    "openprogram/deleteSession": (SessionParams, EmptyResult),
    "openprogram/restoreHunk": (RestoreHunkParams, RestoreResult),
    "openprogram/branchDiff": (BranchDiffParams, BranchDiffResult),
    "openprogram/blame": (BlameParams, BlameResult),
    "openprogram/files": (FilesParams, FilesResult),
    "openprogram/commands": (EmptyParams, CommandsResult),
    "openprogram/image": (ImageParams, ImageResult),
    "openprogram/hooks": (EmptyParams, HooksResult),
    "openprogram/trust": (TrustParams, TrustResult),
    "openprogram/mcp": (EmptyParams, McpResult),
    "openprogram/mcpRestart": (McpRestartParams, McpRestartResult),
    "openprogram/mcpRevokeTrust": (McpRevokeTrustParams, McpRevokeTrustResult),
    "openprogram/subscribe": (SubscribeParams, SubscribeResult),
    "openprogram/unsubscribe": (SessionParams, AcceptedResult),
    "openprogram/rules": (RulesParams, RulesResult),
    "openprogram/revokeRule": (RevokeRuleParams, RevokeRuleResult),
}
"""Client -> server requests: params model and result model. A request is one row here and one
``@handles(method)`` handler (``lsp/requests.py``), which is given the parsed params model."""

REQUEST_PERMISSION = "openprogram/requestPermission"
ASK_QUESTION = "openprogram/askQuestion"
DIAGNOSTICS = "openprogram/diagnostics"
NAVIGATE = "openprogram/navigate"
SERVER_REQUESTS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    REQUEST_PERMISSION: (PermissionRequest, PermissionResponse),
    ASK_QUESTION: (AskQuestionParams, AskQuestionResponse),
    DIAGNOSTICS: (DiagnosticsParams, DiagnosticsResponse),
    NAVIGATE: (NavigateParams, NavigateResponse),
}
"""Server -> client requests (to editors that declare ``experimental.openprogram``): params
model and response model."""

EVENT = "openprogram/event"
NOTIFICATIONS: dict[str, type[BaseModel]] = {EVENT: EventNotification}
"""Server -> client notifications: params model (editors send none of their own: cancelling
uses ``$/cancelRequest``)."""

EVENT_DATA: dict[str, type[BaseModel]] = {
    "turn.started": TurnStartedData,
    "text.delta": TextDeltaData,
    "thought.delta": ThoughtDeltaData,
    "tool.started": ToolStartedData,
    "tool.finished": ToolFinishedData,
    "tool.output": ToolOutputData,
    "plan.updated": PlanUpdatedData,
    "turn.finished": TurnResult,
    "context.compacted": ContextCompactedData,
    "context.usage": ContextUsageData,
    "context.compaction_recommended": CompactionRecommendedData,
    "checkpoint.created": Checkpoint,
    "file.changed": FileChangedData,
    "question.asked": AskQuestionParams,
    "question.replied": QuestionRepliedData,
    "question.rejected": QuestionRejectedData,
    "branch.message_sent": BranchMessageSentData,
    "subagent.started": SubagentData,
    "subagent.ended": SubagentData,
    "permission.withdrawn": PermissionWithdrawnData,
    "permission.requested": PermissionCardData,
    "permission.resolved": PermissionResolvedData,
    "rules.changed": RulesChangedData,
    "mcp.tools_added": McpToolsAddedData,
}
"""The ``data`` of every event type clients handle (``openprogram/event``; others, such as
``model.response_started``, may also arrive and can be ignored)."""


def describe_errors(method: str, exc: ValidationError) -> str:
    """One line naming each bad field, e.g. ``text: Field required``."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "params"
        parts.append(f"{loc}: {err['msg']}")
    return f"invalid params for {method}: " + "; ".join(parts)


def _surrogates(value: Any, where: str, depth: int = 0) -> list[str]:
    """Fields holding a lone surrogate (JSON ``"\\udcff"``): no UTF-8 text can carry one."""
    if isinstance(value, str):
        return [where or "params"] if any("\ud800" <= c <= "\udfff" for c in value) else []
    if depth > 32:
        return []
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            out += _surrogates(key, name, depth + 1) + _surrogates(item, name, depth + 1)
    elif isinstance(value, list):
        for n, item in enumerate(value):
            out += _surrogates(item, f"{where}.{n}" if where else str(n), depth + 1)
    return out


def parse_params(method: str, model: type[P], raw: Any) -> P:
    """Validate raw JSON params; InvalidParams (-32602) naming the fields otherwise."""
    if raw is None or raw == []:
        raw = {}  # Lua encodes an empty table as []
    if not isinstance(raw, dict):
        raise InvalidParams(f"invalid params for {method}: params must be an object, "
                            f"got {type(raw).__name__}")
    bad = list(dict.fromkeys(_surrogates(raw, "")))
    if bad:
        message = "contains a lone surrogate (not valid Unicode text)"
        raise InvalidParams(f"invalid params for {method}: " + "; ".join(
            f"{field}: {message}" for field in bad[:10]),
            data={"errors": [{"field": f, "message": message, "type": "string_unicode"}
                             for f in bad[:10]]})
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = [{"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"],
                   "type": e["type"]} for e in exc.errors(include_url=False)]
        raise InvalidParams(describe_errors(method, exc), data={"errors": errors}) from None
