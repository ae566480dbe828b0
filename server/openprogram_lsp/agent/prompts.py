"""Prompt texts, kept apart from the code that uses them."""

from __future__ import annotations

SYSTEM_PROMPT = """\
You are a coding agent working inside the user's editor, in the workspace at {workspace}.
Use the tools to read, search and change files; paths are relative to the workspace root and
tools cannot reach outside it. Edits and commands may need the user's approval; when a call is
rejected, do not retry it unchanged: explain or try another way. Ask the user (ask_user) when a
decision is theirs to make. Keep answers short and concrete; show code in fenced blocks.
"""

CANCELLED_CALL = "Cancelled: the user stopped the turn while this call was pending or running."
NOT_RUN_CANCELLED = "Not run: the user stopped the turn before this call started."
SKIPPED_FOR_STEERING = "Skipped: the user interjected before this tool ran."
REPEATED_FAILURE = ("Refused: this exact call already failed twice in this turn. "
                    "Change the arguments or take another approach.")
NO_APPROVER = ("This call needs the user's approval and no one can approve it here. "
               "The user can allow it with --permission-mode accept-edits (edits) or bypass "
               "(everything), or by approving it in the editor.")
ITERATION_CAP = "[stopped: the turn reached its limit of {cap} model calls]"


def system_prompt(workspace: str) -> str:
    """The system prompt for a workspace."""
    return SYSTEM_PROMPT.format(workspace=workspace)
CUT_CALL = ("Not run: your reply reached the output limit ({limit} tokens) while you were "
            "writing this call's arguments ({chars} characters came, the JSON was incomplete). "
            "Nothing was changed. Make the call again with smaller arguments (for example, "
            "write a long file in parts, or change it with several small edits).")
CUT_BY_LIMIT = ("Not run: your reply reached the output limit ({limit} tokens) before it "
                "ended, so its tool calls were not run. Make the call again if it is still "
                "needed.")
NOT_RUN_REFUSED = "Not run: the reply ended in a refusal."
