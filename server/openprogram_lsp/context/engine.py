"""The context engine: prepare messages for a turn, keep them within budget, freeze the result.

``prepare`` renders the chain (a summary node standing in for the range it covers), applies the
idle-gap microcompact and counts the budget. Before the model call the loop runner asks
``should_auto_compact`` and, when over, ``auto_compact`` runs snip, then compact, then prepares
again. ``after_turn`` calibrates the estimator from reported usage and returns the turn's
ContextCommit. Stored nodes are never changed: only the prepared copies are.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from openprogram_lsp.context.budget import (
    Calibration,
    estimate_text,
    estimate_tools,
    output_reserve,
    resolve_window,
)
from openprogram_lsp.context.commit import build_commit, kept_ids
from openprogram_lsp.context.compact import SUMMARY_PROMPT, build_summary, plan_cut, summary_node
from openprogram_lsp.context.idle import IdleCache, IdleOut
from openprogram_lsp.context.instructions import Instruction, render_instructions
from openprogram_lsp.context.microcompact import gap_points
from openprogram_lsp.context.prefix import PrefixCache, Rendered
from openprogram_lsp.context.references import TermCache, protected_nodes, scan_references
from openprogram_lsp.context.render import RenderCache, flatten
from openprogram_lsp.context.snip import snip
from openprogram_lsp.context.types import (
    ContextConfig,
    PrepareArgs,
    Segment,
    Summarizer,
    SummaryWriter,
    TurnPrep,
)
from openprogram_lsp.core.chain import NodeChain, id_at
from openprogram_lsp.core.chunked import Chunked
from openprogram_lsp.core.types import Message, Node, ToolSpec, Usage
from openprogram_lsp.events.bus import EventBus, make_event

__all__ = ["ContextEngine", "Summarizer", "estimate_text"]

log = logging.getLogger(__name__)
_FLOOR_CAP = 1024


def pick_summary(history: Sequence[Node], summaries: list[Node]) -> tuple[Node | None, int]:
    """The summary covering the longest prefix of the chain, and where the rest starts.

    A store's chain knows each id's position: one lookup per summary. Otherwise the chain is
    searched from its end and the search stops at the first node a summary runs through.
    """
    if not summaries or not history:
        return None, 0
    by_through: dict[str, Node] = {}
    for s in summaries:  # ties: the first in ``summaries`` order
        through = s.metadata.get("through") or s.caller
        if isinstance(through, str):
            by_through.setdefault(through, s)
    last = len(history) - 1
    stop = last - 1 if history[last].role == "user" else last  # a summary must leave a turn
    if isinstance(history, NodeChain) and history.indexed:
        found = [(p, s) for through, s in by_through.items()
                 if (p := history.position(through)) is not None and p <= stop]
        if not found:
            return None, 0
        at, chosen = max(found, key=lambda f: f[0])
        return chosen, at + 1
    for p in range(stop, -1, -1):
        best = by_through.get(id_at(history, p))
        if best is not None:
            return best, p + 1
    return None, 0


class ContextEngine:
    """Turns the DAG chain into what the model sees on each turn."""

    def __init__(self, *, config: ContextConfig | None = None,
                 calibration: Calibration | None = None, bus: EventBus | None = None,
                 **_: Any) -> None:
        self.config = config or ContextConfig()
        self.calibration = calibration or Calibration(alpha=self.config.calibration_alpha)
        self.bus = bus
        self.render_cache = RenderCache()
        self.prefixes = PrefixCache()
        self.term_cache = TermCache()
        self.idle = IdleCache()
        self._floors: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def auto_compact_ratio(self) -> float:
        """The share of the window at which turn-start compaction runs."""
        return self.config.auto_compact_ratio

    # -- prepare ------------------------------------------------------------------------------

    def prepare(self, *, session_id: str, history: Sequence[Node], system: str,
                tools: list[ToolSpec], model: str, context_window: int,
                max_output_tokens: int = 4096, last_turn_at: str | None = None,
                summaries: list[Node] | None = None, bus: EventBus | None = None,
                now: float | None = None,
                instructions: list[Instruction] | None = None) -> TurnPrep:
        """Render the chain into messages, microcompact after an idle gap, count the budget.

        ``instructions`` (project instruction files) join the system prompt, which no
        compaction touches. ``history`` may be a ``NodeChain``: only the bodies of what is
        rendered (the tail after a summary) are read."""
        args = PrepareArgs(session_id=session_id, history=NodeChain.of(history), system=system,
                           tools=list(tools), model=model, context_window=context_window,
                           max_output_tokens=max_output_tokens, last_turn_at=last_turn_at,
                           summaries=list(summaries or []), now=now,
                           instructions=list(instructions or []))
        return self._prepare(args, bus, announce=True)

    def _prepare(self, args: PrepareArgs, bus: EventBus | None, *, announce: bool) -> TurnPrep:
        window = resolve_window(args.context_window, self.config.window_override)
        summary, start = pick_summary(args.history, args.summaries)
        threshold = self.config.gap_threshold_seconds
        base = self.prefixes.render(args.session_id, NodeChain.of(args.history), summary, start,
                                    self.render_cache, threshold)
        segments = base.segments
        system = args.system
        if args.instructions:
            system = f"{system.rstrip()}\n\n{render_instructions(args.instructions)}\n"
        prep = TurnPrep(session_id=args.session_id, model=args.model, system=system,
                        messages=[], tools=args.tools, context_window=window,
                        max_output_tokens=output_reserve(args.max_output_tokens, window),
                        segments=segments,
                        fixed_tokens=estimate_text(system) + estimate_tools(args.tools),
                        calibration=self.calibration.ratio(args.model), args=args, bus=bus)
        prep.full_segments = segments
        prep.base = base
        prep.instructions = [i.listing() for i in args.instructions]
        if summary is not None:
            prep.summary_node_id = summary.id
            prep.start = start
        now = args.now if args.now is not None else time.time()
        gaps, current = gap_points(segments, threshold=threshold,
                                   last_turn_at=args.last_turn_at, now=now, scanned=base.gaps)
        if gaps:  # the session's idle-gap pass goes on from its last turn's (``idle``)
            out = self.idle.run(args.session_id, base, gaps, self.term_cache,
                                keep_recent=self.config.microcompact_keep_recent,
                                min_tokens=self.config.microcompact_min_tokens)
            before = self._estimate_of(prep, segments)
            prep.protected = out.protected
            if out.keys:
                prep.segments, prep.replaced = out.segments, out.keys
                prep.idle = out
                prep.actions.append("microcompact")
                if current:
                    prep.path = "microcompact"
                    prep.tokens_before = before
        self._account(prep)
        if announce and prep.path == "microcompact":
            self._emit(prep, prep.tokens_before or prep.estimate, "microcompact")
        return prep

    def append_message(self, prep: TurnPrep, message: Message) -> None:
        """Add a message after the prepared history (a hook's context, shown after the
        prompt): the carried rendering's digest and size go on instead of being redone."""
        base: Rendered | None = prep.base
        known = prep.known
        if known is not None and known[0] is prep.messages \
                and isinstance(prep.messages, Chunked):
            messages, digest, chars = prep.messages, known[1], known[2]
        elif base is not None and prep.messages is base.messages:
            messages, digest, chars = base.messages, base.dig, base.chars
        else:
            prep.messages = [*prep.messages, message]
            return
        digest = digest.copy()
        digest.update([message])
        prep.messages = messages.plus([message])
        prep.known = (prep.messages, digest, chars + len(message.content))

    def _estimate_of(self, prep: TurnPrep, segments: Sequence[Segment]) -> int:
        base = prep.base
        idle: IdleOut | None = prep.idle
        history: int
        if base is not None and segments is base.segments:
            history = base.tokens
        elif idle is not None and segments is idle.segments:
            history = idle.tokens
        else:
            history = sum(s.tokens for s in segments)
        return math.ceil((prep.fixed_tokens + history) * prep.calibration) \
            + prep.max_output_tokens

    def _account(self, prep: TurnPrep) -> None:
        base = prep.base
        idle: IdleOut | None = prep.idle
        if base is not None and prep.segments is base.segments:  # carried over, not recounted
            prep.messages, prep.history_tokens, prep.node_ids = \
                base.messages, base.tokens, base.kept
        elif base is not None and idle is not None and prep.segments is idle.segments:
            prep.messages, prep.history_tokens, prep.node_ids = \
                idle.messages, idle.tokens, base.kept  # microcompact keeps every node
            prep.known = (idle.messages, idle.digest, idle.chars)
        else:
            prep.messages = flatten(prep.segments)
            prep.history_tokens = sum(s.tokens for s in prep.segments)
            prep.node_ids = kept_ids(prep)
        prep.estimate = self._estimate_of(prep, prep.segments)

    def _history_budget(self, prep: TurnPrep, ratio: float) -> int:
        """Raw history tokens that keep the prep at ``ratio`` of the window."""
        room = ratio * prep.context_window - prep.max_output_tokens
        return max(0, math.floor(room / max(prep.calibration, 1e-6)) - prep.fixed_tokens)

    # -- decisions ----------------------------------------------------------------------------

    def should_recommend(self, prep: TurnPrep) -> bool:
        """Whether the prep is over the threshold at which compaction is recommended."""
        return prep.usage_ratio >= self.config.recommend_ratio

    def should_auto_compact(self, prep: TurnPrep) -> bool:
        """Whether the turn compacts before the model call: over the auto-compact threshold
        and carrying an earlier snip (re-applied to keep its prefix), or with enough older
        history to be worth a summary (``worth_compacting``) and either past the cooldown since
        the last compaction or really over the window (the request would not fit even with
        the least reply, ``TurnPrep.over_window``) in a way a compaction can mend."""
        if prep.usage_ratio < self.config.auto_compact_ratio:
            return False
        if self._floor(prep.session_id) is not None:
            return True
        if not self.worth_compacting(prep):
            return False
        return self._urgent(prep) or not self.cooling_down(prep)

    def _urgent(self, prep: TurnPrep) -> bool:
        """Over the window, and a compaction could bring it within (when the system prompt and
        tool schemas alone overflow it, compacting every turn would not help)."""
        if not prep.over_window:
            return False
        segments = prep.segments
        last = segments[-1].turn if segments else -1
        older = sum(s.tokens for s in segments if 0 <= s.turn < last)
        after = prep.prompt_tokens - int(older * prep.calibration) + 128  # a minimal summary
        return after + prep.min_reply <= prep.context_window

    def worth_compacting(self, prep: TurnPrep) -> bool:
        """Whether the history before the last turn (an earlier summary aside) holds at least
        a tenth of the window: less than that, a summary call would win next to nothing (the
        system prompt and tool schemas fill the window, as at a very small one)."""
        segments = prep.segments
        if not segments:
            return False
        last = segments[-1].turn
        older = sum(s.tokens for s in segments if 0 <= s.turn < last)
        return older * prep.calibration >= prep.context_window // 10

    def turns_since_compaction(self, prep: TurnPrep) -> int | None:
        """User turns since the summary in use was made (None: no summary, or one made before
        the turn it was made in was recorded, or whose turn is out of the rendered tail)."""
        if prep.summary_node_id is None or prep.args is None:
            return None
        summary = next((n for n in prep.args.summaries if n.id == prep.summary_node_id), None)
        at = summary.metadata.get("compactedAt") if summary is not None else None
        segments = prep.full_segments or prep.segments
        if not isinstance(at, str) or not segments:
            return None
        turn = next((s.turn for s in segments if s.node_id == at), None)
        return None if turn is None else segments[-1].turn - turn

    def cooling_down(self, prep: TurnPrep) -> bool:
        """Whether the last compaction was fewer than ``cooldown_turns`` turns ago."""
        since = self.turns_since_compaction(prep)
        return since is not None and since < self.config.cooldown_turns

    def _floor(self, sid: str) -> str | None:
        with self._lock:
            return self._floors.get(sid)

    # -- compaction ---------------------------------------------------------------------------

    async def auto_compact(self, prep: TurnPrep, *, history: Sequence[Node] | None = None,
                           summarize: Summarizer | None, persist: SummaryWriter | None = None,
                           bus: EventBus | None = None) -> TurnPrep:
        """Snip; when that is not enough compact (then prepare again); emit context.compacted.

        An earlier snip of the session is re-applied first, exactly (same kept prefix, so the
        provider's prompt cache holds), while that keeps the turn under the threshold. Within
        the cooldown after a compaction nothing more is done unless the request would not fit.
        Otherwise snip and compact bring the context to at most ``target_ratio``."""
        cfg = self.config
        bus = bus or prep.bus
        before = prep.estimate
        segments = list(prep.segments)  # compaction looks at every segment
        refs = set(prep.protected) or scan_references(segments, self.term_cache)
        sid = prep.session_id
        floor = self._floor(sid)
        max_drop = int(cfg.snip_max_ratio * prep.context_window)
        if floor is not None:
            res = snip(segments, budget=self._history_budget(prep, cfg.auto_compact_ratio) - 1,
                       keep_turns=cfg.snip_keep_turns, protected=protected_nodes(refs),
                       floor=floor, max_drop=max_drop, floor_only=True)
            if res.fits and res.dropped:
                return self._snipped(prep, res.segments, res.dropped, refs, before, bus)
        if not self.worth_compacting(prep) or (not self._urgent(prep)
                                               and self.cooling_down(prep)):
            return prep
        res = snip(segments, budget=self._history_budget(prep, cfg.target_ratio),
                   keep_turns=cfg.snip_keep_turns, protected=protected_nodes(refs), floor=floor,
                   max_drop=max_drop)
        if res.fits and res.dropped:
            self._remember_floor(sid, res.segments)
            return self._snipped(prep, res.segments, res.dropped, refs, before, bus)
        new = await self._compact(prep, summarize, persist, bus, manual=False)
        changed = new is not prep
        if new.usage_ratio >= cfg.auto_compact_ratio:
            # last resort: the kept tail itself is too big; snip it, protection off
            res = snip(list(new.segments),
                       budget=self._history_budget(new, cfg.target_ratio),
                       keep_turns=1)
            if res.dropped:
                snipped = new.snipped
                new = self._derive(new, res.segments)
                new.snipped = [*snipped, *res.dropped]
                new.actions.append("snip")
                if not changed:
                    new.path = "snip"
                changed = True
            if new.usage_ratio >= cfg.auto_compact_ratio:
                new.details["over_budget"] = True
                log.warning("session %s is still at %.0f%% of its window after compaction",
                            sid, 100 * new.usage_ratio)
        if not changed:  # nothing could be removed: no event, the turn goes on as it is
            return new
        with self._lock:  # a summary replaces what an earlier snip hid
            self._floors.pop(sid, None)
        new.tokens_before = before
        self._emit(new, before, new.path, bus)
        return new

    def _snipped(self, prep: TurnPrep, segments: list[Segment], dropped: list[str],
                 refs: set[str], before: int, bus: EventBus | None) -> TurnPrep:
        new = self._derive(prep, segments)
        new.snipped, new.protected = dropped, sorted(refs)
        new.path, new.tokens_before = "snip", before
        new.actions.append("snip")
        self._emit(new, before, "snip", bus)
        return new

    async def compact_now(self, prep: TurnPrep, *, summarize: Summarizer | None,
                          persist: SummaryWriter | None = None,
                          bus: EventBus | None = None) -> TurnPrep:
        """Manual compaction (``/compact``): summarise everything; emit context.compacted."""
        bus = bus or prep.bus
        before = prep.estimate
        new = await self._compact(prep, summarize, persist, bus, manual=True)
        if new is prep:
            return prep
        new.tokens_before = before
        self._emit(new, before, "manual", bus)
        return new

    async def _compact(self, prep: TurnPrep, summarize: Summarizer | None,
                       persist: SummaryWriter | None, bus: EventBus | None, *,
                       manual: bool) -> TurnPrep:
        cfg = self.config
        segments = list(prep.full_segments or prep.segments)
        window = prep.context_window
        # what the history may use after compaction: summary and kept tail within the target
        room = self._history_budget(prep, cfg.target_ratio)
        summary_cap = max(128, min(cfg.summary_max_tokens, int(window * cfg.summary_window_ratio)))
        plan = plan_cut(segments, keep_turns=cfg.compact_keep_turns,
                        tail_budget=max(0, min(int(window * cfg.compact_tail_ratio),
                                               room - summary_cap)), manual=manual)
        covered = plan.covered(segments)
        if not any(s.node.role in ("user", "assistant") for s in covered) or prep.args is None:
            prep.details["nothing_to_compact"] = True
            return prep
        tail = sum(s.tokens for s in segments[plan.cut:])
        summary_tokens = max(128, min(summary_cap, room - tail))
        chunk_tokens = max(512, window // 2 - summary_tokens - estimate_text(SUMMARY_PROMPT))
        path, text, error = await build_summary(covered, summarize, max_tokens=summary_tokens,
                                                chunk_tokens=chunk_tokens,
                                                timeout=cfg.summarizer_timeout)
        extra: dict[str, object] = {"model": prep.model, "tokensBefore": prep.estimate,
                                    "manual": manual,
                                    "compactedAt": id_at(prep.args.history, -1)}
        if error:
            extra["summarizerError"] = error
        node = summary_node(text, covered, path=path, extra=extra)
        if persist is not None:
            node = persist(node)
        args = replace(prep.args, summaries=[*prep.args.summaries, node])
        new = self._prepare(args, bus, announce=False)
        new.actions = [*prep.actions, path]
        new.path = "manual" if manual else path
        new.summary_node_id = node.id
        if error:
            new.details["summarizer_error"] = error
        return new

    def _derive(self, prep: TurnPrep, segments: list[Segment]) -> TurnPrep:
        new = replace(prep, segments=segments, actions=list(prep.actions),
                      details=dict(prep.details))
        self._account(new)
        return new

    def _remember_floor(self, sid: str, segments: list[Segment]) -> None:
        after_note = False
        for seg in segments:
            if seg.node_id.endswith("__snip_note"):
                after_note = True
            elif after_note and seg.turn >= 0:
                with self._lock:
                    self._floors[sid] = seg.node_id
                    self._floors.move_to_end(sid)
                    while len(self._floors) > _FLOOR_CAP:
                        self._floors.popitem(last=False)
                return

    def _emit(self, prep: TurnPrep, before: int, path: str,
              bus: EventBus | None = None) -> None:
        payload: dict[str, Any] = {
            "tokens_before": before, "tokens_after": prep.estimate, "path": path,
            "context_window": prep.context_window, "snipped": len(prep.snipped),
            "summarised": len(prep.summarised), "replaced": len(prep.replaced),
        }
        if path in ("compact", "structural", "manual") and prep.summary_node_id:
            payload["summary_node_id"] = prep.summary_node_id
        if prep.details.get("summarizer_error"):
            payload["summarizer_error"] = prep.details["summarizer_error"]
        target = bus or prep.bus or self.bus
        if target is not None:
            target.emit(make_event("context.compacted", payload,
                                   session_id=prep.session_id, origin="context"))

    # -- after the turn -----------------------------------------------------------------------

    def after_turn(self, *, session_id: str, turn_id: str, prep: TurnPrep, usage: Usage,
                   first_call_input_tokens: int | None = None) -> dict[str, Any]:
        """Calibrate from the reported usage; return the turn's ContextCommit as a dict."""
        calibrated: float | None = None
        if first_call_input_tokens and prep.raw_input > 0:
            calibrated = self.calibration.observe(prep.model, prep.raw_input,
                                                  first_call_input_tokens)
        used = (first_call_input_tokens + prep.max_output_tokens if first_call_input_tokens
                else prep.estimate)
        recommend = used / max(1, prep.context_window) >= self.config.recommend_ratio
        cfg = self.config
        commit = build_commit(prep, turn_id=turn_id, usage=usage,
                              first_call_input_tokens=first_call_input_tokens,
                              calibrated_after=calibrated, recommend=recommend,
                              thresholds={"recommend": cfg.recommend_ratio,
                                          "autoCompact": cfg.auto_compact_ratio,
                                          "target": cfg.target_ratio})
        if recommend:
            target = prep.bus or self.bus
            if target is not None:
                target.emit(make_event(
                    "context.compaction_recommended",
                    {"usage_ratio": round(used / max(1, prep.context_window), 4),
                     "context_window": prep.context_window},
                    session_id=session_id, turn_id=turn_id, origin="context"))
        return commit.wire()
