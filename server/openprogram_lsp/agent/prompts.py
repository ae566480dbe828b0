"""Prompt texts, kept apart from the code that uses them: the system prompt is built from
``prompts/system.md`` and the sections of ``prompts/tools.md`` for the tools offered."""

from __future__ import annotations

import functools
import platform
from collections.abc import Iterable
from importlib import resources

CANCELLED_CALL = "Cancelled: the user stopped the turn while this call was pending or running."
NOT_RUN_CANCELLED = "Not run: the user stopped the turn before this call started."
SKIPPED_FOR_STEERING = "Skipped: the user interjected before this tool ran."
REPEATED_FAILURE = ("Refused: this exact call already failed twice in this turn. "
                    "Change the arguments or take another approach.")
NO_APPROVER = ("This call needs the user's approval and no one can approve it here. "
               "The user can allow it with --permission-mode accept-edits (edits) or bypass "
               "(everything), or by approving it in the editor.")
ITERATION_CAP = "[stopped: the turn reached its limit of {cap} model calls]"
CUT_CALL = ("Not run: your reply reached the output limit ({limit} tokens) while you were "
            "writing this call's arguments ({chars} characters came, the JSON was incomplete). "
            "Nothing was changed. Make the call again with smaller arguments (for example, "
            "write a long file in parts, or change it with several small edits).")
CUT_BY_LIMIT = ("Not run: your reply reached the output limit ({limit} tokens) before it "
                "ended, so its tool calls were not run. Make the call again if it is still "
                "needed.")
NOT_RUN_REFUSED = "Not run: the reply ended in a refusal."


BRIEF_BELOW = 32_000
"""Context windows smaller than this get the brief prompt (``system_brief.md``, about a
quarter of the full one's 1,300 tokens): a small local model's window is better spent on the
conversation."""


def system_prompt(workspace: str, tools: Iterable[str] = (), window: int | None = None) -> str:
    """The system prompt for a workspace, the names of the tools offered and the model's
    context window (a small one gets the brief prompt).

    Only what stays the same for a session goes here (it is the head of every request's cached
    prefix); what changes between turns (git state, date, top-level listing) goes with the
    user's message instead (``context.environment``)."""
    if window is not None and window < BRIEF_BELOW:
        return _read_cached("system_brief.md").format(workspace=workspace, os=_os_name())
    offered = set(tools)
    guidance = "".join(f"{text}\n" for names, text in _tool_sections() if offered & names)
    return _read_cached("system.md").format(workspace=workspace, os=_os_name(),
                                            tool_guidance=guidance)


def _read(name: str) -> str:
    return resources.files("openprogram_lsp").joinpath("prompts", name).read_text("utf-8")


@functools.cache
def _read_cached(name: str) -> str:
    return _read(name)


@functools.cache
def _tool_sections() -> tuple[tuple[frozenset[str], str], ...]:
    """``tools.md``'s sections: the tool names of each heading and its text."""
    out = []
    for part in _read("tools.md").split("\n## ")[1:]:
        head, _, body = part.partition("\n")
        names = frozenset(n.strip() for n in head.split(","))
        out.append((names, body.strip("\n")))
    return tuple(out)


@functools.cache
def _os_name() -> str:
    return f"{platform.system()} {platform.release()}".strip() or "unknown"
