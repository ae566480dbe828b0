"""ask_user: put a question to the user and wait for the answer."""

from __future__ import annotations

import asyncio
import contextlib

from pydantic import BaseModel, Field

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.model import Model
from openprogram_lsp.events.questions import QuestionRegistry
from openprogram_lsp.tools.base import Tool, ToolContext, ToolOutput


class AskUserInput(Model):
    question: str = Field(description="The question to ask")
    options: list[str] | None = Field(None, description="Answers to choose from, if any")


class AskUser(Tool):
    name = "ask_user"
    description = "Ask the user a question and wait for the answer."
    kind = "think"
    Input = AskUserInput

    def __init__(self, registry: QuestionRegistry | None = None) -> None:
        self._registry = registry

    def title(self, args: BaseModel) -> str:
        assert isinstance(args, AskUserInput)
        return f"Ask: {args.question[:60]}"

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, AskUserInput)
        registry = self._registry or ctx.questions
        if registry is None:
            return ToolOutput("ask_user is unavailable: no question registry", is_error=True)
        q = registry.new_question(args.question, options=args.options,
                                  session_id=ctx.session_id, turn_id=ctx.turn_id)
        fut = registry.open(q)
        relay: asyncio.Task[None] | None = None
        if ctx.asker is not None:
            asker = ctx.asker

            async def _relay() -> None:
                answer = await asker.ask(q)
                if answer is None:
                    registry.reject(q.question_id, reason="dismissed")
                else:
                    registry.answer(q.question_id, answer)

            relay = asyncio.create_task(_relay())
        try:
            answer = await asyncio.wait_for(asyncio.shield(fut), ctx.question_timeout)
        except TimeoutError:
            registry.reject(q.question_id, reason="timeout")
            raise ToolError("the user did not answer in time") from None
        except asyncio.CancelledError:
            registry.reject(q.question_id, reason="cancelled")
            raise
        finally:
            registry.discard(q.question_id)
            if relay is not None and not relay.done():
                relay.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await relay
        if answer is None:
            raise ToolError("the user declined to answer")
        return ToolOutput(answer)
