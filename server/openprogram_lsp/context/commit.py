"""ContextCommit: the frozen record of what the model was shown on one turn and why."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ConfigDict, Field, model_validator

from openprogram_lsp.context.budget import estimate_text
from openprogram_lsp.context.digest import messages_digest
from openprogram_lsp.context.microcompact import PLACEHOLDER
from openprogram_lsp.context.render import render_one
from openprogram_lsp.context.snip import note_segment
from openprogram_lsp.context.types import TurnPrep
from openprogram_lsp.core.chain import id_at
from openprogram_lsp.core.ranges import Ranges, count_ranges, decode_ranges, encode_ranges
from openprogram_lsp.core.types import Message, Node, Usage, Wire

COMMIT_VERSION = 3
"""2: ``messagesDigest`` over groups of messages (``digest``, ``DIGEST_VERSION``); 3: the
store may keep ``replaced``/``protected`` as a change from the previous record
(``store.context_deltas``), which its reader gives back in full."""
ID_LISTS = ("kept", "snipped", "summarised")


class ContextCommit(Wire):
    """Immutable per-turn record: window, estimate, real usage and what was kept or cut.

    ``kept`` lists the nodes rendered (a summary node id first when one replaced the older
    history), ``snipped`` the chain nodes left out by snip, ``summarised`` the chain nodes a
    summary stood in for, ``replaced`` the tool results (``nodeId:toolCallId``) shown as
    placeholders by microcompact, ``protected`` the results kept because later text refers to
    them. ``messagesDigest`` is a SHA-256 of the exact messages sent, for replay checks, as
``version`` defines it (``context.digest``: 2 over groups of 256 messages, 1 over all).

    As the engine writes it, ``kept``, ``snipped`` and ``summarised`` come as
    ``keptRanges``... instead: runs of positions on the chain ending at ``chainHead`` (the
    turn's user node), so building and storing it costs the same on every turn; ``expanded``
    (or the store's reader) turns them back into ids. The store keeps ``replaced`` and
    ``protected`` of a version 3 record as a change from the previous turn's record
    (``store.context_deltas``); its reader gives them back in full, and a record read
    otherwise is refused here.
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True,
                              alias_generator=Wire.model_config.get("alias_generator"))

    version: int = COMMIT_VERSION
    session_id: str
    turn_id: str
    model: str
    context_window: int
    output_reserve: int
    estimate: int
    estimate_input: int
    raw_estimate_input: int
    calibration: float
    calibrated_after: float | None = None
    usage: Usage = Field(default_factory=Usage)
    first_call_input_tokens: int | None = None
    summarizer_usage: Usage | None = None
    usage_ratio: float
    recommend_compaction: bool = False
    path: str = "none"
    actions: list[str] = Field(default_factory=list)
    tokens_before: int | None = None
    summary_node_id: str | None = None
    kept: list[str] = Field(default_factory=list)
    snipped: list[str] = Field(default_factory=list)
    summarised: list[str] = Field(default_factory=list)
    replaced: list[str] = Field(default_factory=list)
    protected: list[str] = Field(default_factory=list)
    messages: int = 0
    messages_digest: str = ""
    thresholds: dict[str, float] = Field(default_factory=dict)
    status: str | None = None
    created_at: str | None = None
    instructions: list[dict[str, Any]] = Field(default_factory=list)  # files in the system prompt
    kept_ranges: Ranges | None = None
    snipped_ranges: Ranges | None = None
    summarised_ranges: Ranges | None = None
    chain_head: str | None = None  # the last chain node the ranges' positions are on

    @model_validator(mode="before")
    @classmethod
    def _not_a_stored_delta(cls, data: Any) -> Any:
        if isinstance(data, dict) and "listsBase" in data:
            raise ValueError("replaced/protected stored as a delta: read the record through "
                             "SessionStore.read_context_commit, which gives them in full")
        return data

    def count(self, key: str) -> int:
        """How many ids ``kept``, ``snipped`` or ``summarised`` holds (ranges or list)."""
        ranges = getattr(self, f"{key}_ranges")
        return len(getattr(self, key)) if ranges is None else count_ranges(ranges)

    def expanded(self, chain: Sequence[str]) -> ContextCommit:
        """The commit with its ranges read back into id lists against ``chain`` (ids root
        first, the chain through ``chain_head``)."""
        update: dict[str, Any] = {}
        for key in ID_LISTS:
            ranges = getattr(self, f"{key}_ranges")
            if ranges is not None:
                update[key] = decode_ranges(ranges, chain)
                update[f"{key}_ranges"] = None
        return self.model_copy(update=update) if update else self

    def sent(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` are what this turn sent (its digest, as its version has it:
        records written before version 2 keep their one SHA-256 over every message)."""
        return messages_digest(messages, self.version) == self.messages_digest

    def wire(self) -> dict[str, Any]:
        """The record as stored: an id list given as ranges is not written twice."""
        out = super().wire()
        for key in ID_LISTS:
            if f"{key}Ranges" in out:
                out.pop(key, None)
        return out

    def digest_view(self) -> dict[str, Any]:
        """A small summary for node metadata and history listings."""
        out: dict[str, Any] = {
            "path": self.path, "contextWindow": self.context_window, "estimate": self.estimate,
            "usageRatio": round(self.usage_ratio, 4), "inputTokens": self.usage.input_tokens,
            "kept": self.count("kept"), "snipped": self.count("snipped"),
            "summarised": self.count("summarised"), "replaced": len(self.replaced),
        }
        if self.summary_node_id:
            out["summaryNodeId"] = self.summary_node_id
        if self.recommend_compaction:
            out["recommendCompaction"] = True
        return out


__all__ = ["ContextCommit", "build_commit", "context_digest", "kept_ids", "messages_digest",
           "replay"]


def kept_ids(prep: TurnPrep) -> list[str]:
    """Node ids rendered in a prep (synthetic notes left out)."""
    return [s.node_id for s in prep.segments if not s.node_id.endswith("__snip_note")]


def _id_lists(prep: TurnPrep) -> dict[str, Any]:
    """``kept``, ``snipped`` and ``summarised`` as ranges of chain positions (the carried-over
    rendering's ranges, else what the turn rendered looked up; the summarised prefix is one
    range), or as lists without a chain."""
    if prep.args is None or not prep.args.history:
        return {"kept": kept_ids(prep), "snipped": list(prep.snipped),
                "summarised": list(prep.summarised)}
    history = prep.args.history
    start = prep.start
    base = prep.base
    pos: dict[str, int] = {}
    idle = prep.idle  # microcompact replaces messages, never drops a segment
    if base is not None and (prep.segments is base.segments
                             or (idle is not None and prep.segments is idle.segments)):
        kept_ranges: Ranges = list(base.ranges)
    else:
        pos = {id_at(history, i): i for i in range(start, len(history))}
        kept_ranges = encode_ranges(kept_ids(prep), pos)
    if prep.snipped and not pos:
        pos = {id_at(history, i): i for i in range(start, len(history))}
    return {"kept_ranges": kept_ranges,
            "snipped_ranges": encode_ranges(prep.snipped, pos),
            "summarised_ranges": [[0, start - 1]] if start > 0 else [],
            "chain_head": id_at(history, -1)}


def _digest(prep: TurnPrep) -> str:
    base, known = prep.base, prep.known
    if known is not None and known[0] is prep.messages:
        return known[1].hexdigest()
    if base is not None and prep.messages is base.messages:
        return str(base.digest)
    return messages_digest(prep.messages)


def build_commit(prep: TurnPrep, *, turn_id: str, usage: Usage,
                 first_call_input_tokens: int | None, calibrated_after: float | None,
                 thresholds: dict[str, float], recommend: bool) -> ContextCommit:
    """Freeze a turn's prep and its reported usage into a ContextCommit."""
    reserve = prep.max_output_tokens
    return ContextCommit(
        session_id=prep.session_id, turn_id=turn_id, model=prep.model,
        context_window=prep.context_window, output_reserve=reserve, estimate=prep.estimate,
        estimate_input=max(0, prep.estimate - reserve), raw_estimate_input=prep.raw_input,
        calibration=round(prep.calibration, 4),
        calibrated_after=round(calibrated_after, 4) if calibrated_after is not None else None,
        usage=usage, first_call_input_tokens=first_call_input_tokens,
        summarizer_usage=prep.summarizer_usage,
        usage_ratio=prep.usage_ratio, recommend_compaction=recommend, path=prep.path,
        actions=list(prep.actions), tokens_before=prep.tokens_before,
        summary_node_id=prep.summary_node_id, **_id_lists(prep), replaced=list(prep.replaced),
        protected=list(prep.protected), messages=len(prep.messages),
        messages_digest=_digest(prep), thresholds=thresholds,
        instructions=list(prep.instructions))


def context_digest(record: dict[str, Any]) -> dict[str, Any]:
    """The small view of a ContextCommit dict kept in the assistant node's metadata (the
    result lists, which it only counts, are not validated again: after an idle gap they
    name every old result)."""
    replaced = record.get("replaced")
    view = ContextCommit.model_validate({**record, "replaced": [], "protected": []}).digest_view()
    view["replaced"] = len(replaced) if isinstance(replaced, list) else 0
    return view


def replay(commit: ContextCommit, nodes: Mapping[str, Node]) -> list[Message]:
    """Rebuild the messages a turn sent from its ContextCommit and the stored nodes.

    The stored nodes are never changed by compaction, so rendering the kept ids again, with
    the snip note where the snipped turns were and placeholders for the replaced results,
    gives back what the model saw; compare ``messages_digest`` to check it.
    """
    if commit.chain_head is not None and any(
            getattr(commit, f"{k}_ranges") is not None for k in ID_LISTS):
        commit = commit.expanded(_chain_of(commit.chain_head, nodes))
    replaced = set(commit.replaced)
    kept = [i for i in commit.kept if i in nodes]
    pos = _positions(kept, nodes)
    first_snip = pos.get(commit.snipped[0]) if commit.snipped else None
    turns = sum(1 for i in commit.snipped if i in nodes and nodes[i].role == "user") or 1
    note = note_segment(turns, nodes[kept[0]]).messages if kept and commit.snipped else []
    out: list[Message] = []
    for nid in kept:
        if note and first_snip is not None and pos.get(nid, -1) > first_snip:
            out.extend(note)
            note = []
        for m in render_one(nodes[nid]):
            if m.role == "tool" and f"{nid}:{m.tool_call_id}" in replaced:
                m = m.model_copy(update={"content": PLACEHOLDER.format(
                    tokens=estimate_text(m.content))})
            out.append(m)
    return out + note


def _chain_of(head: str, nodes: Mapping[str, Node]) -> list[str]:
    """The ids of the chain ending at ``head``, root first."""
    chain: list[str] = []
    cur: str | None = head
    while cur is not None and cur in nodes:
        chain.append(cur)
        cur = nodes[cur].predecessor
    chain.reverse()
    return chain


def _positions(kept: list[str], nodes: Mapping[str, Node]) -> dict[str, int]:
    """Chain positions, walking back once from the last kept chain node."""
    chain: list[str] = []
    cur: str | None = next((i for i in reversed(kept) if nodes[i].role != "summary"), None)
    while cur is not None and cur in nodes:
        chain.append(cur)
        cur = nodes[cur].predecessor
    chain.reverse()
    return {nid: i for i, nid in enumerate(chain)}
