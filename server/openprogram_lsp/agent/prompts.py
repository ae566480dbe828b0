"""Prompt texts, kept apart from the code that uses them: the system prompt is built from
``prompts/system.md`` and the sections of ``prompts/tools.md`` for the tools offered."""

from __future__ import annotations

import functools
import platform
from collections.abc import Iterable
from importlib import resources
from typing import Literal

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


EditorDiagnostics = Literal["none", "off", "errors", "errors_and_warnings"]
"""What the session's editor gives after an edit: ``none`` (it cannot: ACP, a plain LSP client,
the CLI), ``off`` (configured off), or the level it reports."""

NAVIGATION_TOOLS = frozenset({"lsp_definition", "lsp_references", "lsp_hover",
                              "lsp_document_symbols", "lsp_workspace_symbols"})
EDIT_TOOLS = frozenset({"write_file", "edit_file", "multi_edit"})

DIAGNOSTICS_NOTES: dict[str, str] = {
    "none": ("- No language-server diagnostics reach you here (this client does not pass on "
             "its editor's): nothing reports the type errors or lint failures an edit "
             "introduces. Check your changes by running the project's build, type checker or "
             "tests."),
    "off": ("- Language-server diagnostics after edits are turned off here "
            "([diagnostics] after_edits = \"off\"): nothing reports the type errors or lint "
            "failures an edit introduces. Check your changes by running the project's build, "
            "type checker or tests."),
    "errors": ("- After an edit, its result lists the errors the editor's language servers "
               "report that it introduced, with their lines: fix them before you go on."),
    "errors_and_warnings": ("- After an edit, its result lists the errors and warnings the "
                            "editor's language servers report that it introduced, with their "
                            "lines: fix them before you go on."),
}
NO_NAVIGATION = ("- There is no definition, references or symbol lookup here (this client does "
                 "not offer its editor's language servers): find symbols with grep.")


def language_notes(tools: Iterable[str], diagnostics: EditorDiagnostics) -> str:
    """What the model is told, once, of the editor's language servers: the diagnostics after
    its edits (when it can edit) and whether it can navigate (the ``lsp_*`` tools)."""
    offered = set(tools)
    notes = []
    if offered & EDIT_TOOLS:
        notes.append(DIAGNOSTICS_NOTES[diagnostics])
    if not offered & NAVIGATION_TOOLS:
        notes.append(NO_NAVIGATION)
    return "".join(f"{n}\n" for n in notes)


def system_prompt(workspace: str, tools: Iterable[str] = (), window: int | None = None,
                  diagnostics: EditorDiagnostics = "none") -> str:
    """The system prompt for a workspace, the names of the tools offered, the model's context
    window (a small one gets the brief prompt) and what the session's editor reports after an
    edit (the language notes: said once, here, also when nothing can answer).

    Only what stays the same for a session goes here (it is the head of every request's cached
    prefix); what changes between turns (git state, date, top-level listing) goes with the
    user's message instead (``context.environment``)."""
    offered = set(tools)
    notes = language_notes(offered, diagnostics)
    if window is not None and window < BRIEF_BELOW:
        return _read_cached("system_brief.md").format(workspace=workspace, os=_os_name(),
                                                      language=notes)
    guidance = "".join(f"{text}\n" for names, text in _tool_sections() if offered & names)
    return _read_cached("system.md").format(workspace=workspace, os=_os_name(),
                                            tool_guidance=guidance + notes)


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
