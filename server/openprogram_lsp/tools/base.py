"""The tool interface: a pydantic input model, an ACP kind, and an async ``run``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from openprogram_lsp.config import Settings
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.images import ImageBlobs
from openprogram_lsp.core.ports import Asker, Buffers, CallSite, Collab, EditorHost, LanguageServers
from openprogram_lsp.core.types import DiffPreview, ToolKind, ToolSpec
from openprogram_lsp.events.questions import QuestionRegistry
from openprogram_lsp.tools.approved_edit import ApprovedEdit


@dataclass(slots=True)
class ToolContext:
    """What a running tool may use: the workspace, the turn, and typed ports."""

    workspace: Path
    session_id: str = ""
    turn_id: str = ""
    cancel: asyncio.Event | None = None
    asker: Asker | None = None
    question_timeout: float | None = None
    on_paths_changed: Callable[[Iterable[str]], None] | None = None
    questions: QuestionRegistry | None = None  # where ask_user's questions wait for answers
    settings: Settings | None = None  # the validated settings of the run
    collab: Collab | None = None  # subagents and send_message (the collab tools)
    editor: EditorHost | None = None
    buffers: Buffers | None = None  # the LSP editor's open documents
    language: LanguageServers | None = None  # the editor's language servers (diagnostics)
    grant: str | None = None  # what the approval of this call granted beyond it ("bypass")
    on_output: Callable[[str], None] | None = None  # live output of this call, as it comes
    emit: Callable[[str, dict[str, Any]], None] | None = None  # an event of this turn (bus)
    # before an edit goes into an editor buffer with unsaved changes (the workspace-relative
    # path): the turn's checkpoint records that buffer from then on
    on_buffer_edit: Callable[[str], Awaitable[None]] | None = None
    images: ImageBlobs | None = None  # where an image a tool returns is stored (by content)
    # an edit the user approved in a prompt: write exactly it (some hunks, maybe), or refuse
    approved_edit: ApprovedEdit | None = None

    def output(self, text: str) -> None:
        """Report a piece of this call's output while it runs (shown live by editors)."""
        if self.on_output is not None:
            self.on_output(text)

    @property
    def site(self) -> CallSite:
        """Where this call runs (for ports that need the session, turn and workspace)."""
        return CallSite(self.session_id, self.turn_id, self.workspace)

    def touched(self, *paths: str) -> None:
        """Report workspace-relative paths this tool wrote or deleted."""
        if self.on_paths_changed is not None:
            self.on_paths_changed(paths)


@dataclass(slots=True)
class ToolOutput:
    """A tool's result text for the model, and whether it is an error."""

    text: str
    is_error: bool = False
    data: dict[str, Any] = field(default_factory=dict)


_SPECS: dict[type, tuple[ToolSpec, str]] = {}  # the spec and its schema as JSON


def lean_schema(schema: Any) -> Any:
    """A pydantic JSON Schema without what only costs the model tokens: every ``title`` (the
    field's name again), and an optional field's ``anyOf [T, null]`` with ``default: null``
    (a field left out is the same)."""
    if isinstance(schema, list):
        return [lean_schema(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: lean_schema(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema.get("properties"), dict):  # the names here are fields, not keywords
        out["properties"] = {name: lean_schema(v) for name, v in schema["properties"].items()}
    any_of = out.get("anyOf")
    if "default" in out and out["default"] is None and isinstance(any_of, list) \
            and len(any_of) == 2 and {"type": "null"} in any_of:
        kept = next(x for x in any_of if x != {"type": "null"})
        out.pop("anyOf")
        out.pop("default")
        out = {**kept, **out}
    return out


class Tool:
    """Base class of every tool."""

    name: ClassVar[str]
    description: ClassVar[str]
    kind: ClassVar[ToolKind] = "other"
    category: ClassVar[str] = "core"
    spawns: ClassVar[bool] = False  # starts an agent: its prompt may grant "run without asking"
    writes: ClassVar[tuple[str, ...] | None] = None  # the arguments naming every file a call
    # writes, when known before it runs (its checkpoint can record them first); None: anything
    asks: ClassVar[bool] = True  # False: allowed in every mode without a prompt (rules and
    # gates still apply): it only ends or reads what an approved call started
    Input: ClassVar[type[BaseModel]]

    def spec(self) -> ToolSpec:
        """The tool as offered to the model (built once: schemas are static, and costly)."""
        cached = _SPECS.get(type(self))
        if cached is None:
            schema = lean_schema(self.Input.model_json_schema())
            cached = _SPECS[type(self)] = (
                ToolSpec(name=self.name, description=self.description, input_schema=schema,
                         kind=self.kind), json.dumps(schema))
        # callers may mutate theirs: a fresh schema, parsed (ten times cheaper than deepcopy)
        return cached[0].model_copy(update={"input_schema": json.loads(cached[1])})

    def parse(self, arguments: dict[str, Any]) -> BaseModel:
        """Validate arguments; a clear ToolError names the bad field."""
        try:
            return self.Input.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}"
                for e in exc.errors())
            raise ToolError(f"invalid arguments for {self.name}: {problems}") from None

    def title(self, args: BaseModel) -> str:
        """A one-line description of a call, for approvals and the UI."""
        return self.name

    def source(self) -> dict[str, str] | None:
        """Where the tool comes from when it is not built in (MCP: server and tool)."""
        return None

    def destructive(self) -> bool:
        """Whether its author marks it destructive (MCP ``destructiveHint``): only a rule
        naming the tool itself allows it without asking."""
        return False

    def must_ask(self) -> str | None:
        """Why its next call asks whatever the mode and the rules say (None: they decide)."""
        return None

    def approved(self) -> None:
        """The user allowed a call that ``must_ask`` made ask."""

    def preview(self, args: BaseModel, ctx: ToolContext) -> DiffPreview | None:
        """The edit this call would make, if it is an edit."""
        return None

    async def sandboxing(self, ctx: ToolContext,
                         args: BaseModel | None = None) -> tuple[bool, str] | None:
        """Whether a call will run sandboxed and why not (None: not a command tool)."""
        return None

    def always_asks(self, args: BaseModel) -> str | None:
        """Why this call asks every time outside ``bypass``, whatever the mode or a rule says,
        with no "always" option (None: the usual rules apply); shown on the approval card."""
        return None

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        """Execute the tool."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """End what the tool still runs (the server is stopping)."""

    async def end_session(self, session_id: str) -> None:
        """End what the tool still runs for one session (it is being deleted)."""
