"""Domain types shared across layers: nodes, messages, tool calls, turn requests and results.

Models serialise to the wire (camelCase) with ``model_dump(by_alias=True)`` and accept both
spellings on input.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

from openprogram_lsp.core.model import Model

Role = Literal["user", "assistant", "tool", "summary", "system"]
NodeStatus = Literal["running", "done", "error", "cancelled", "interrupted"]
TurnStatus = Literal["done", "error", "cancelled", "truncated", "refused"]
ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
ToolStatus = Literal["pending", "in_progress", "completed", "failed"]
PermissionMode = Literal["ask", "accept-edits", "plan", "bypass"]
PERMISSION_MODES: tuple[str, ...] = ("ask", "accept-edits", "plan", "bypass")
DefinitionScope = Literal["user", "workspace"]
"""Where a hook or an agent definition comes from (the user's files are trusted as they are)."""
StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal",
                     "pause_turn", "max_iterations", "cancelled", "error"]


def _wire_schema(schema: dict[str, Any], cls: type[BaseModel]) -> None:
    """Make a model's JSON Schema say what ``wire()`` sends (see :class:`Wire`)."""
    props: dict[str, Any] = schema.get("properties", {})
    required = list(schema.get("required", []))
    keep: frozenset[str] = getattr(cls, "WIRE_KEEPS_NULL", frozenset())
    may_null: bool = getattr(cls, "WIRE_MAY_BE_NULL", False)
    for name, field in cls.model_fields.items():
        alias = field.alias or name
        if field.exclude:
            props.pop(alias, None)
            required = [r for r in required if r != alias]
            continue
        prop = props.get(alias)
        if prop is None:
            continue
        variants = prop.get("anyOf", [])
        nullable = {"type": "null"} in variants
        if alias in keep:
            if alias not in required:
                required.append(alias)
        elif nullable:
            if alias in required:
                required.remove(alias)
            if not may_null:  # None is left out, never sent as null
                rest = [v for v in variants if v != {"type": "null"}]
                del prop["anyOf"]
                if len(rest) == 1:
                    prop.update(rest[0])
                else:
                    prop["anyOf"] = rest
            if prop.get("default", 0) is None:
                del prop["default"]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)
    schema["additionalProperties"] = False


class Wire(Model):
    """Base model of what the server sends: camelCase aliases, populate by either name.

    ``wire()`` leaves None out, so in the JSON Schema a nullable field is optional and never
    null, except the fields named in ``WIRE_KEEPS_NULL`` (always sent, maybe null); with
    ``WIRE_MAY_BE_NULL`` (payloads built as dicts) nullable fields are optional and may be null.
    Fields with defaults are always sent, so they are required.
    """

    WIRE_KEEPS_NULL: ClassVar[frozenset[str]] = frozenset()
    WIRE_MAY_BE_NULL: ClassVar[bool] = False

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True,
                              json_schema_serialization_defaults_required=True,
                              json_schema_extra=_wire_schema)

    def wire(self) -> dict[str, Any]:
        """Dump as the JSON-ready camelCase dict sent to clients."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def payload(self) -> dict[str, Any]:
        """The JSON-ready dict of its snake_case fields a bus event carries (None left out but
        for ``WIRE_KEEPS_NULL``); the transports spell it their way."""
        out = self.model_dump(mode="json", exclude_none=True)
        for name, info in type(self).model_fields.items():
            if (info.alias or name) in self.WIRE_KEEPS_NULL:
                out.setdefault(name, None)
        return out


class ImageSize(Wire):
    """An image as it was given, before it was downscaled to fit the models' limits."""

    width: int
    height: int
    size: int = Field(description="Bytes")


class ImagePart(Wire):
    """An image in a message: its record (the bytes stay in the session's image store)."""

    sha256: str = Field(description="The image's content hash (its name in the store)")
    media_type: str = Field(description="image/png, image/jpeg, image/gif or image/webp")
    width: int
    height: int
    size: int = Field(description="Bytes")
    name: str | None = Field(None, description="What the user or the tool called it")
    original: ImageSize | None = Field(
        None, description="The image as given, when it was over the models' limits and was "
                          "downscaled to this one")


PlanStatus = Literal["pending", "in_progress", "completed"]


class PlanEntry(Wire):
    """One step of the agent's to-do list (``todo_write``; ACP ``plan`` entries)."""

    content: str = Field(description="The step, imperative (\"Run the tests\")")
    status: PlanStatus
    active_form: str | None = Field(None, description="The step as an ongoing action "
                                    "(\"Running the tests\"), shown while in progress")


class ToolCallRecord(Wire):
    """One tool call as recorded on an assistant node."""

    id: str
    name: str
    kind: ToolKind = "other"
    input: dict[str, Any] = Field(default_factory=dict)
    status: ToolStatus = "pending"
    output: str | None = None
    title: str | None = None
    step: int = 0
    blocked_reason: str | None = None  # why a gate, admission, mode or rule refused the call
    cancelled: bool | None = None  # True: the turn's cancel cut it (running, waiting, not started)
    # who let the call run: {by: user|rule|mode|bypass, decidedAt, mode, rule?, optionId?, option?}
    approval: dict[str, Any] | None = None
    attachments: list[dict[str, Any]] | None = Field(default=None, exclude=True)
    images: list[ImagePart] | None = Field(
        None, description="Images the tool returned (read_file of an image, an MCP tool's "
                          "image content): shown to a model that sees")


class Node(Wire):
    """One node of the conversation DAG."""

    id: str
    role: Role
    text: str = ""
    predecessor: str | None = None
    caller: str | None = None
    created_at: str = ""
    status: NodeStatus | None = None
    tool_calls: list[ToolCallRecord] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


NODES: TypeAdapter[list[Node]] = TypeAdapter(list[Node], config=ConfigDict(defer_build=True))
"""Many nodes in one validation or dump: a history page's 200 in one call cost about half
what 200 calls cost."""


class ToolCall(Wire):
    """A tool call requested by the model."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Thought(Wire):
    """Reasoning a model wrote before a step's reply: shown collapsed, never reply text, sent
    back where its API requires it (by the model that wrote it only)."""

    text: str = ""
    source: Literal["anthropic", "openai", "scripted"]
    model: str | None = None  # the model that wrote it
    signature: str | None = None  # Anthropic ``thinking``: checked when the block comes back
    redacted: str | None = None  # Anthropic ``redacted_thinking``: its encrypted ``data``
    field: str | None = None  # OpenAI-compatible: reasoning_content, reasoning or extra_content
    # ``extra_content`` (Gemini's thought signature): that object as sent on the step's tool
    # call number ``call`` (0-based), which must carry it back; it has no text
    call: int | None = None
    extra: dict[str, Any] | None = None


class Message(Wire):
    """A provider-neutral chat message."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    thoughts: list[Thought] = Field(default_factory=list)  # assistant: its step's reasoning
    images: list[ImagePart] = Field(default_factory=list)  # user and tool: shown after the text


class ToolSpec(Wire):
    """A tool as offered to the model."""

    name: str
    description: str
    input_schema: dict[str, Any]
    kind: ToolKind = "other"


class Usage(Wire):
    """Token usage of a turn or model call."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    estimated: bool | None = Field(
        None, description="Some of it is counted from the text, not reported by the provider "
        "(a model call the cancel cut before its usage came)")

    def add(self, other: Usage) -> Usage:
        """Return the sum of two usages."""
        def _s(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=_s(self.cache_read_tokens, other.cache_read_tokens),
            cache_write_tokens=_s(self.cache_write_tokens, other.cache_write_tokens),
            estimated=True if self.estimated or other.estimated else None,
        )


class CheckpointFile(Wire):
    """A file changed by a checkpoint."""

    path: str
    status: Literal["added", "modified", "deleted"]
    unsaved: bool | None = Field(
        None, description="The checkpoint holds the editor buffer's unsaved text of this file, "
                          "not the disk's (an agent edit into a buffer with unsaved changes)")


class Checkpoint(Wire):
    """A commit of the project's files in the private checkpoint store."""

    id: str
    session_id: str | None = None
    turn_id: str | None = None
    parent_id: str | None = None
    created_at: str = ""
    message: str = ""
    files: list[CheckpointFile] = Field(default_factory=list)
    kind: Literal["baseline", "turn", "safety", "restore"] = "turn"
    skipped: list[str] | None = None
    undone_by: str | None = Field(
        None, description="A turn undone (openprogram/restore with undo): the restore "
                          "checkpoint that did it; absent once that undo is itself restored away")


class TurnError(Wire):
    """Why a turn failed."""

    message: str
    code: int | None = None


class TurnResult(Wire):
    """What one turn produced."""

    session_id: str
    user_node_id: str
    assistant_node_id: str
    head_id: str
    status: TurnStatus
    text: str = ""
    usage: Usage = Field(default_factory=Usage)
    checkpoint: Checkpoint | None = None
    checkpoint_pending: str | None = Field(
        None, description="With checkpoint null: the id of the turn's checkpoint, still to be "
        "committed (the turn ended during the workspace's first walk); a checkpoint.created "
        "event brings it, and history names it at once")
    error: TurnError | None = None
    warnings: list[str] | None = None

    WIRE_KEEPS_NULL: ClassVar[frozenset[str]] = frozenset({"checkpoint"})

    def wire(self) -> dict[str, Any]:
        """Dump keeping ``checkpoint: null`` as the contract lists it."""
        out = super().wire()
        out.setdefault("checkpoint", None)
        return out


class _Inherit:
    """Sentinel type: continue the session's active branch."""

    _instance: _Inherit | None = None

    def __new__(cls) -> _Inherit:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "INHERIT"


INHERIT = _Inherit()
BranchFrom = _Inherit | str | None


class ClientOptions(Model):
    """What the editor driving a session set for its turns (over TCP: its own connection's).

    ``providers`` overrides ``[providers]`` of the config files (``{openai: {base_url,
    api_key_env, api_key_command}}``); ``mcp_owner`` names whose editor MCP servers it sees.
    """

    model_config = ConfigDict(frozen=True)

    question_timeout: float | None = None
    disabled_tools: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] | None = None
    agent_model: str | None = None
    max_messages: int | None = None
    mcp_owner: str | None = None
    providers: dict[str, dict[str, str]] | None = None


class TurnRequest(Model):
    """Everything the dispatcher needs to run one turn."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    session_id: str | None = None
    branch_from: Any = INHERIT  # INHERIT | None (new root) | node id (sibling fork)
    model: str | None = None
    reasoning_effort: str | None = None  # over the model's configured effort (ACP config)
    workspace: str | None = None
    source: Literal["user", "agent_spawn", "send_message", "follow_up", "cli"] = "user"
    permission_mode: PermissionMode | None = None
    advance_head: bool = True
    agent_id: str | None = None
    label: str | None = None
    branch_name: str | None = None
    message_depth: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)
    rules: list[Any] = Field(default_factory=list)  # the client's own rules (tools.rules.Rule)


class PermissionOption(Wire):
    """One choice offered when a tool call needs approval."""

    option_id: str
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]


def default_permission_options() -> list[PermissionOption]:
    """What an approval offers unless told otherwise (made per request: a process that never
    asks never builds the model)."""
    return [
        PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
        PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
        PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
        PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
    ]


class PreviewHunk(Wire):
    """One run of changed lines of an edit preview (1-based starts, as in a unified diff); an
    approval may accept some hunks by ``index`` (``acceptedHunks``)."""

    index: int = Field(description="0-based, in file order: what acceptedHunks names")
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    header: str | None = Field(None, description="The unified-diff header, @@ -a,b +c,d @@")


class DiffPreview(Wire):
    """The edit a tool call would make, for approval prompts."""

    path: str
    old_text: str
    new_text: str
    unsaved_changes: bool | None = None  # True: old_text is the editor's unsaved buffer
    hunks: list[PreviewHunk] | None = Field(
        None, description="The changed runs of oldText -> newText; absent: the edit can only be "
        "approved whole")
    # False: old_text is a stand-in (a file too large or not text), not the file's text
    exact: bool = Field(True, exclude=True)


class McpSource(Wire):
    """Where an MCP tool comes from."""

    server: str
    tool: str
    description: str | None = Field(None, description="The server's own description of the "
                                                      "tool (on approval cards)")


class PermissionToolCall(Wire):
    """The tool call an approval is about."""

    tool_call_id: str
    name: str
    kind: ToolKind
    title: str
    input: dict[str, Any]
    diff: DiffPreview | None = None
    sandboxed: bool | None = None  # commands: whether it will run in the sandbox
    sandbox_note: str | None = None  # why not, when it will not
    mcp: McpSource | None = Field(None, description="Set when an MCP server's tool asks")
    parts: list[str] | None = None  # the simple commands of an execute call, each shown
    uncovered_parts: list[str] | None = None  # those no rule allows yet


class PermissionRequest(Wire):
    """An approval request for one tool call."""

    session_id: str
    turn_id: str
    tool_call: PermissionToolCall
    options: list[PermissionOption] = Field(default_factory=default_permission_options)
    label: str | None = None  # the child agent asking, when it is one
    workspace: str | None = Field(default=None, exclude=True)


class PermissionOutcome(Wire):
    """The answer to a permission request."""

    outcome: Literal["selected", "cancelled"]
    option_id: str | None = None
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"] | None = None
    reason: str | None = None
    accepted_hunks: list[int] | None = None  # an allowed edit: only these hunks (None: all)

    @property
    def allowed(self) -> bool:
        """Whether the tool call may run."""
        return self.outcome == "selected" and self.kind in ("allow_once", "allow_always")


class Question(Wire):
    """A question the agent asks the user."""

    question_id: str
    session_id: str | None = None
    turn_id: str | None = None
    question: str
    options: list[str] | None = None
    allow_free_text: bool = True
