"""Compaction: summarise the older part of the history into one appended summary node.

The summary node is off the chain (``predecessor`` None, so the head and branch tips never
change); its ``caller`` is the last chain node it covers, so it applies exactly to the chains
that contain that node, and ``metadata.covers`` lists the ids it summarises directly (an earlier
summary it folds in included). The model writes the summary from a plain-text transcript, in
chunks that fit its window; when that fails, a structural summary is built without a model.
Either way the user's own requests in the covered range are appended verbatim (truncated),
because losing instructions is what users of other agents complain about most.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass

from openprogram_lsp.context.budget import estimate_text
from openprogram_lsp.context.types import Segment, Summarizer, SummaryRequest
from openprogram_lsp.core.errors import TurnCancelled
from openprogram_lsp.core.ids import new_id, now_iso
from openprogram_lsp.core.types import Message, Node

log = logging.getLogger(__name__)

SUMMARY_PROMPT = """\
You are compacting a coding-agent conversation so it can continue within a limited context \
window. Write a summary for your own later use, in plain text, with these sections:
1. Goals and instructions: everything the user asked for or required, including constraints \
and preferences, in their words where short.
2. Decisions and current state: what was done, what was decided and why.
3. Files: each file read or changed and its current state (paths exact).
4. Open items: unfinished work, errors not yet fixed, questions awaiting an answer.
Be concise and concrete; keep exact names, paths, commands and error messages. If an earlier \
summary is given, fold it in: the result replaces it."""
TOOL_OUTPUT_CHARS = 1200
USER_REQUEST_CHARS = 300


@dataclass(slots=True)
class CompactPlan:
    """Which segments a compaction summarises and which it keeps."""

    cut: int  # segments[:cut] are summarised, segments[cut:] kept

    def covered(self, segments: list[Segment]) -> list[Segment]:
        """The segments the summary replaces."""
        return segments[:self.cut]


def plan_cut(segments: list[Segment], *, keep_turns: int, tail_budget: int,
             manual: bool = False) -> CompactPlan:
    """Summarise everything before the last ``keep_turns`` turns (fewer when they are too big).

    A manual compaction summarises everything. The cut always lands on the start of a turn and
    never covers the last user message.
    """
    if manual:
        return CompactPlan(len(segments))
    starts = [i for i, s in enumerate(segments)
              if s.turn >= 0 and (i == 0 or segments[i - 1].turn != s.turn)]
    if not starts:
        return CompactPlan(0)
    cut = starts[-1]  # at the least, keep the last turn
    kept = 1
    while kept < keep_turns and kept < len(starts):
        candidate = starts[-1 - kept]
        if sum(s.tokens for s in segments[candidate:]) > tail_budget:
            break
        cut = candidate
        kept += 1
    return CompactPlan(cut)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


def transcript_units(segments: list[Segment]) -> list[str]:
    """One plain-text block per segment, for the summariser."""
    out = []
    for seg in segments:
        node = seg.node
        if node.role == "summary":
            out.append(f"## Earlier summary\n{node.text.strip()}")
            continue
        parts = []
        for m in seg.messages:
            if m.role == "user":
                parts.append(f"## User\n{m.content.strip()}")
            elif m.role == "assistant":
                if m.content.strip():
                    parts.append(f"## Assistant\n{m.content.strip()}")
                for c in m.tool_calls:
                    parts.append(f"## Tool call {c.name} "
                                 f"{json.dumps(c.arguments, ensure_ascii=False)[:400]}")
            elif m.role == "tool":
                label = "error" if m.is_error else "result"
                parts.append(f"## Tool {label}\n{_clip(m.content, TOOL_OUTPUT_CHARS)}")
        out.append("\n".join(parts))
    return out


def chunk_units(units: list[str], chunk_tokens: int) -> list[str]:
    """Group units into chunks of at most ``chunk_tokens`` (an oversized unit is clipped)."""
    chunks: list[str] = []
    cur: list[str] = []
    size = 0
    for u in units:
        t = estimate_text(u)
        if t > chunk_tokens:
            u = _clip(u, chunk_tokens * 3)
            t = estimate_text(u)
        if cur and size + t > chunk_tokens:
            chunks.append("\n\n".join(cur))
            cur, size = [], 0
        cur.append(u)
        size += t
    if cur:
        chunks.append("\n\n".join(cur))
    return chunks


def clip_tokens(text: str, max_tokens: int) -> str:
    """Cut a text so its estimate is at most ``max_tokens``."""
    if estimate_text(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_text(text[:mid]) + 8 <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + "\n[summary truncated]"


async def llm_summary(segments: list[Segment], summarize: Summarizer, *, max_tokens: int,
                      chunk_tokens: int, timeout: float) -> str:
    """Summarise through the model, chunk by chunk, each call folding in the previous summary."""
    summary = ""
    for chunk in chunk_units(transcript_units(segments), chunk_tokens):
        body = (f"Earlier summary:\n{summary}\n\nConversation to fold in:\n{chunk}" if summary
                else f"Conversation to summarise:\n{chunk}")
        req = SummaryRequest(system=SUMMARY_PROMPT,
                             messages=[Message(role="user", content=body)],
                             max_tokens=max_tokens)
        summary = (await asyncio.wait_for(summarize(req), timeout)).strip()
        if not summary:
            raise ValueError("the summariser returned an empty summary")
    return summary


def request_list(segments: list[Segment]) -> list[str]:
    """The user's messages in the covered range (an earlier summary's list first), clipped."""
    out: list[str] = []
    for s in segments:
        node = s.node
        if node.role == "summary":
            earlier = node.metadata.get("userRequests")
            if isinstance(earlier, list):
                out.extend(str(x) for x in earlier)
        elif node.role == "user" and node.text.strip():
            out.append(_clip(node.text, USER_REQUEST_CHARS).replace("\n", " "))
    return out


def user_requests(requests: list[str], max_tokens: int) -> str:
    """The requests as a list, repeats folded, newest kept first when space runs out."""
    folded: list[tuple[str, int]] = []
    for r in requests:
        if folded and folded[-1][0] == r:
            folded[-1] = (r, folded[-1][1] + 1)
        else:
            folded.append((r, 1))
    picked: list[str] = []
    used = 0
    for text, n in reversed(folded):
        line = f"- {text}" + (f" (x{n})" if n > 1 else "")
        cost = estimate_text(line) + 1
        if used + cost > max_tokens:
            break
        picked.append(line)
        used += cost
    if not picked:
        return ""
    skipped = len(folded) - len(picked)
    head = "User requests in this part (verbatim, oldest first"
    head += f"; {skipped} older ones omitted):" if skipped else "):"
    return head + "\n" + "\n".join(reversed(picked))


def structural_summary(segments: list[Segment], max_tokens: int) -> str:
    """A summary built without a model: earlier summary, tool activity, files, last replies."""
    lines: list[str] = []
    earlier = next((s.node.text.strip() for s in segments if s.node.role == "summary"), "")
    if earlier:
        lines.append("Earlier summary:\n" + _clip(earlier, max_tokens * 2))
    files: dict[str, str] = {}
    tools: dict[str, int] = {}
    errors: list[str] = []
    replies: list[str] = []
    for seg in segments:
        node = seg.node
        for c in node.tool_calls or []:
            tools[c.name] = tools.get(c.name, 0) + 1
            path = c.input.get("path")
            if isinstance(path, str):
                files[path] = c.kind
            if c.status == "failed":
                errors.append(f"{c.name}: {_clip(c.output or '', 120)}")
        if node.role == "assistant" and node.text.strip():
            replies.append(_clip(node.text, 200).replace("\n", " "))
    turns = len({s.turn for s in segments if s.turn >= 0})
    lines.append(f"(Structural summary: the model could not summarise; {turns} turn(s) "
                 "compacted.)")
    if tools:
        lines.append("Tools used: " + ", ".join(f"{k} x{v}" for k, v in sorted(tools.items())))
    if files:
        lines.append("Files touched: " + ", ".join(f"{p} ({k})" for p, k in files.items()))
    if errors:
        lines.append("Failed tool calls:\n" + "\n".join(f"- {e}" for e in errors[-10:]))
    if replies:
        lines.append("Last assistant replies:\n" + "\n".join(f"- {r}" for r in replies[-5:]))
    return clip_tokens("\n".join(lines), max_tokens)


def covers_of(segments: list[Segment]) -> list[str]:
    """Ids a summary of these segments covers directly (chain nodes and an earlier summary)."""
    return [s.node_id for s in segments if s.node.role in ("user", "assistant", "summary",
                                                           "system")
            and not s.node_id.endswith("__snip_note")]


def last_chain_id(segments: list[Segment]) -> str | None:
    """The last chain node among the segments (the summary hangs off it)."""
    return next((s.node_id for s in reversed(segments)
                 if s.node.role in ("user", "assistant") and not s.node_id.endswith("__snip_note")),
                None)


async def build_summary(segments: list[Segment], summarize: Summarizer | None, *,
                        max_tokens: int, chunk_tokens: int, timeout: float
                        ) -> tuple[str, str, str | None]:
    """The summary text and how it was made: ("compact"|"structural", text, error)."""
    requests = user_requests(request_list(segments), max(64, max_tokens // 4))
    body_tokens = max_tokens - estimate_text(requests) - 8
    error: str | None = None
    path = "compact"
    text = ""
    if summarize is not None:
        try:
            text = clip_tokens(await llm_summary(segments, summarize, max_tokens=body_tokens,
                                                 chunk_tokens=chunk_tokens, timeout=timeout),
                               body_tokens)
        except (TurnCancelled, asyncio.CancelledError):
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            log.warning("summariser failed (%s); using a structural summary", error)
    else:
        error = "no summariser"
    if not text:
        path = "structural"
        text = structural_summary(segments, body_tokens)
    if requests:
        text = f"{text}\n\n{requests}"
    return path, text, error


def summary_node(text: str, covered: list[Segment], *, path: str,
                 extra: dict[str, object] | None = None) -> Node:
    """The appended summary node: off the chain, hanging off the last covered chain node."""
    return Node(id=new_id("sum_"), role="summary", text=text, predecessor=None,
                caller=last_chain_id(covered), created_at=now_iso(), status="done",
                metadata={"covers": covers_of(covered), "through": last_chain_id(covered),
                          "path": path, "userRequests": request_list(covered)[-200:],
                          **(extra or {})})
