"""Approvals and questions on the terminal; Ctrl-C at a prompt ends the command."""

from __future__ import annotations

import asyncio
import difflib
import sys
import threading

from openprogram_lsp.core.types import PermissionOutcome, PermissionRequest, Question


async def read_line(prompt: str) -> str:
    """A line from stdin, read on a daemon thread so Ctrl-C never waits for Enter.

    ``asyncio.to_thread`` would park ``input()`` on the loop's executor, whose shutdown waits
    for the pending read: Ctrl-C then cancelled the turn but the process stayed. A daemon
    thread dies with the process. EOF counts as an empty answer.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()

    def deliver(value: str) -> None:
        if not done.done():
            done.set_result(value)

    def work() -> None:
        try:
            sys.stderr.write(prompt)
            sys.stderr.flush()
            line = sys.stdin.readline()
        except (OSError, ValueError):
            line = ""
        loop.call_soon_threadsafe(deliver, line)

    threading.Thread(target=work, name="terminal-prompt", daemon=True).start()
    return (await done).strip()


class TerminalApprover:
    """Asks approvals on the terminal, listing every option by what it allows."""

    async def request_permission(self, request: PermissionRequest) -> PermissionOutcome:
        call = request.tool_call
        lines = [f"\n? {call.title}  [{call.kind}]"]
        if call.parts and len(call.parts) > 1:
            lines += [f"    $ {p}" for p in call.parts]
        task = call.input.get("prompt") if call.name == "agent" else None
        if isinstance(task, str):
            lines.append("  task: " + task)
        if call.diff is not None:
            lines.append(short_diff(call.diff.path, call.diff.old_text, call.diff.new_text))
        lines += [f"  [{i}] {o.name}" for i, o in enumerate(request.options, 1)]
        answer = await read_line("\n".join(lines) + "\n> ")
        if answer.isdigit() and 0 < int(answer) <= len(request.options):
            chosen = request.options[int(answer) - 1]
            return PermissionOutcome(outcome="selected", option_id=chosen.option_id,
                                     kind=chosen.kind)
        return PermissionOutcome(outcome="selected", option_id="reject_once",
                                 kind="reject_once")


class TerminalAsker:
    """Asks agent questions on the terminal."""

    async def ask(self, question: Question) -> str | None:
        prompt = f"\n? {question.question}"
        if question.options:
            prompt += "".join(f"\n  {i}. {o}" for i, o in enumerate(question.options, 1))
        answer = await read_line(prompt + "\n> ")
        if question.options and answer.isdigit() and 0 < int(answer) <= len(question.options):
            return question.options[int(answer) - 1]
        return answer or None


class NoTerminalAsker:
    """Declines questions when there is no terminal to ask on."""

    async def ask(self, question: Question) -> str | None:
        return None


def short_diff(path: str, old: str, new: str) -> str:
    """A unified diff of at most 40 lines, indented for a prompt."""
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}",
                                     f"b/{path}", lineterm="", n=1))
    shown = diff[:40] + ([f"… {len(diff) - 40} more lines"] if len(diff) > 40 else [])
    return "\n".join("  " + ln for ln in shown)
