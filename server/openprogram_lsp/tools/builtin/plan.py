"""todo_write: the model's to-do list for the task, replaced whole on each call, sent to the
editors as ``plan.updated`` (a live checklist; ACP ``plan`` updates). The list is stored as the
call's input on the turn's node, so a history (or a re-attached editor) finds the latest plan
in the branch's last completed ``todo_write`` call."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from openprogram_lsp.core.model import Model
from openprogram_lsp.core.types import PlanEntry, PlanStatus
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.descriptions import TODO_WRITE

MAX_TODOS = 100
MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class Todo(Model):
    model_config = ConfigDict(populate_by_name=True)

    content: str = Field(min_length=1, max_length=1000,
                         description="The step, imperative: \"Run the tests\"")
    status: PlanStatus = Field(description="pending, in_progress or completed")
    active_form: str | None = Field(None, alias="activeForm", max_length=1000,
                                    description="The step as an ongoing action: \"Running "
                                    "the tests\"")


class TodoWriteInput(Model):
    todos: list[Todo] = Field(max_length=MAX_TODOS,
                              description="The whole list, in order (replaces the last one)")


def entries(args: TodoWriteInput) -> list[PlanEntry]:
    """The list as plan entries (blank text trimmed)."""
    return [PlanEntry(content=t.content.strip(), status=t.status,
                      active_form=(t.active_form or "").strip() or None) for t in args.todos]


class TodoWrite(Tool):
    name = "todo_write"
    description = TODO_WRITE
    kind = "think"
    Input = TodoWriteInput

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, TodoWriteInput)
        done = sum(t.status == "completed" for t in args.todos)
        return f"Plan: {done}/{len(args.todos)} done"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, TodoWriteInput)
        plan = entries(args)
        payload = [e.payload() for e in plan]
        if ctx.emit is not None:
            ctx.emit("plan.updated", {"entries": payload})
        lines = [f"{MARKS[e.status]} {e.content}" for e in plan]
        done = sum(e.status == "completed" for e in plan)
        working = [e for e in plan if e.status == "in_progress"]
        head = f"To-do list updated: {done} of {len(plan)} completed." if plan \
            else "To-do list cleared."
        notes = []
        if len(working) > 1:
            notes.append(f"{len(working)} items are in progress; keep one in progress at a "
                         "time")
        elif not working and done < len(plan):
            notes.append("no item is in progress; mark the one you start in_progress")
        text = "\n".join([head, *lines, *(f"[{n}]" for n in notes)])
        return ToolOutput(text, data={"plan": payload})
