"""What the context engine hands the loop runner for one turn, and its settings."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from openprogram_lsp.config.sections.context import ContextSection
from openprogram_lsp.context.budget import estimate_messages
from openprogram_lsp.context.digest import DigestState
from openprogram_lsp.core.chain import id_at
from openprogram_lsp.core.transcript import Transcript
from openprogram_lsp.core.types import Message, Node, ToolSpec, Usage

GAP_THRESHOLD_SECONDS = 3600.0
RECOMMEND_PCT = 0.70
AUTO_COMPACT_PCT = 0.85
TARGET_PCT = 0.50
COOLDOWN_TURNS = 4
MIN_REPLY_SHARE = 8  # a request leaves at least 1/8 of the window for the reply (or the reserve)


@dataclass(frozen=True, slots=True)
class ContextConfig:
    """Thresholds and sizes; ``from_config`` takes the ``[context]`` settings."""

    recommend_ratio: float = RECOMMEND_PCT
    auto_compact_ratio: float = AUTO_COMPACT_PCT
    target_ratio: float = TARGET_PCT  # snip and compact bring the context to at most this
    cooldown_turns: int = COOLDOWN_TURNS  # no compaction this soon after one, unless over
    gap_threshold_seconds: float = GAP_THRESHOLD_SECONDS
    microcompact_keep_recent: int = 5
    microcompact_min_tokens: int = 500
    snip_keep_turns: int = 2  # the current user message plus one full exchange before it
    snip_max_ratio: float = 0.25  # snip hides at most this share of the window; then compact
    compact_keep_turns: int = 2
    compact_tail_ratio: float = 0.30  # the kept tail may use at most this share of the window
    summary_max_tokens: int = 2048
    summary_window_ratio: float = 0.10
    summarizer_timeout: float = 180.0
    calibration_alpha: float = 0.3
    window_override: int | None = None  # ``context.window``: replaces the provider's window

    @classmethod
    def from_config(cls, section: ContextSection) -> ContextConfig:
        """The engine's settings from the validated ``[context]`` section."""
        return cls(recommend_ratio=section.recommend, auto_compact_ratio=section.auto_compact,
                   target_ratio=section.target, cooldown_turns=section.cooldown_turns,
                   gap_threshold_seconds=section.gap_seconds, window_override=section.window)


@dataclass(slots=True, repr=False)
class Segment:
    """The messages one node renders to, their token estimate and the turn they belong to."""

    node: Node
    messages: list[Message]
    tokens: int
    turn: int  # index of the user turn; -1 for a summary (never snipped)
    rule: str = ""  # the image token rule it was counted under (none: it has no images)

    @property
    def node_id(self) -> str:
        """The id of the node this segment renders."""
        return self.node.id

    def __repr__(self) -> str:
        return f"Segment({self.node.id!r}, turn={self.turn}, messages={len(self.messages)}, " \
               f"tokens={self.tokens})"


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """One call to the summariser: instructions, a transcript message and an output cap."""

    system: str
    messages: list[Message]
    max_tokens: int


Summarizer = Callable[[SummaryRequest], Awaitable[str]]
SummaryWriter = Callable[[Node], Node]


@dataclass(slots=True, repr=False)
class PrepareArgs:
    """The inputs of a prepare call, kept so compaction can prepare again."""

    session_id: str
    history: Sequence[Node]  # a NodeChain when prepared by the engine
    system: str
    tools: list[ToolSpec]
    model: str
    context_window: int
    max_output_tokens: int
    last_turn_at: str | None
    summaries: list[Node]
    now: float | None
    instructions: list[Any] = field(default_factory=list)  # context.instructions.Instruction


class ChainIds(Sequence[str]):
    """The ids of ``nodes[:stop]`` without a list of them (what a summary stands in for):
    a prep's bookkeeping costs nothing per node of the session's older part."""

    __slots__ = ("_nodes", "_stop")

    def __init__(self, nodes: Sequence[Node] = (), stop: int = 0) -> None:  # NodeChain too
        self._nodes = nodes
        self._stop = max(0, min(stop, len(nodes)))

    def __len__(self) -> int:
        return self._stop

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [id_at(self._nodes, k) for k in range(*i.indices(self._stop))]
        if i < 0:
            i += self._stop
        if not 0 <= i < self._stop:
            raise IndexError(i)
        return id_at(self._nodes, i)

    def __iter__(self) -> Iterator[str]:
        nodes = self._nodes
        return (id_at(nodes, k) for k in range(self._stop))

    def __contains__(self, value: object) -> bool:
        return any(nid == value for nid in self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChainIds | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other,
                                                                         strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"ChainIds({self._stop} ids)"


@dataclass(slots=True, repr=False)
class TurnPrep:
    """Messages for the model plus the budget arithmetic behind them."""

    session_id: str
    model: str
    system: str
    messages: Sequence[Message]  # the carried rendering's own sequence when nothing was cut
    tools: list[ToolSpec]
    context_window: int
    max_output_tokens: int
    estimate: int = 0  # calibrated: system + history + tool schemas + output reserve
    node_ids: Sequence[str] = field(default_factory=list)
    snipped: list[str] = field(default_factory=list)
    start: int = 0  # where the rendered chain begins: a summary stands for ``history[:start]``
    replaced: list[str] = field(default_factory=list)
    path: str = "none"
    details: dict[str, Any] = field(default_factory=dict)
    segments: Sequence[Segment] = field(default_factory=list)
    full_segments: Sequence[Segment] = field(default_factory=list)  # before microcompact, snip
    fixed_tokens: int = 0  # system + tool schemas (raw, uncalibrated)
    history_tokens: int = 0  # raw, uncalibrated
    calibration: float = 1.0
    protected: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    summary_node_id: str | None = None
    tokens_before: int | None = None
    args: PrepareArgs | None = None
    bus: Any = None
    summarizer_usage: Usage | None = None  # tokens the summariser spent this turn
    instructions: list[dict[str, Any]] = field(default_factory=list)  # files in the prompt
    base: Any = None  # context.prefix.Rendered: the carried-over rendering segments came from
    idle: Any = None  # context.idle.IdleOut: the carried idle-gap pass segments came from
    # (messages, their digest's state, their summed content length) when known without a pass
    known: tuple[Sequence[Message], DigestState, int] | None = None

    def __repr__(self) -> str:  # short: a prep can hold thousands of messages
        return (f"TurnPrep(session_id={self.session_id!r}, model={self.model!r}, "
                f"messages={len(self.messages)}, estimate={self.estimate}, "
                f"window={self.context_window}, path={self.path!r})")

    def transcript(self) -> Transcript:
        """The messages as the start of an agent loop's transcript (not copied; the carried
        rendering's character count comes along)."""
        base, known = self.base, self.known
        if known is not None and known[0] is self.messages:
            return Transcript(self.messages, chars=known[2])
        carried = base is not None and self.messages is base.messages
        return Transcript(self.messages, chars=base.chars if carried else None)

    @property
    def summarised(self) -> ChainIds:
        """The chain nodes the summary stands in for (``history[:start]``)."""
        return ChainIds(self.args.history if self.args is not None else (), self.start)

    @property
    def usage_ratio(self) -> float:
        """Estimated share of the context window this prep uses."""
        return self.estimate / max(1, self.context_window)

    @property
    def raw_input(self) -> int:
        """The uncalibrated estimate of the prompt (what the provider will count as input)."""
        return self.fixed_tokens + self.history_tokens

    @property
    def prompt_tokens(self) -> int:
        """The calibrated estimate of the prompt."""
        return math.ceil(self.raw_input * self.calibration)

    @property
    def min_reply(self) -> int:
        """The least output a request may ask for: the reserve, at most 1/8 of the window."""
        return min(self.max_output_tokens, max(256, self.context_window // MIN_REPLY_SHARE))

    @property
    def reply_tokens(self) -> int:
        """The output tokens the request asks for: the reserve, or what the window leaves after
        the prompt and a 5% margin (the estimate is not the server's count) when that is less,
        but never under ``min_reply``."""
        return self.reply_tokens_after(())

    def reply_tokens_after(self, added: Sequence[Message]) -> int:
        """``reply_tokens`` once the turn has added ``added`` (its replies and tool results)
        after the prepared messages."""
        prompt = self.prompt_tokens
        if added:
            prompt += math.ceil(estimate_messages(added) * self.calibration)
        room = self.context_window - prompt - self.context_window // 20
        return max(self.min_reply, min(self.max_output_tokens, room))

    @property
    def over_window(self) -> bool:
        """Whether the request cannot fit the window even with the least reply."""
        return self.prompt_tokens + self.min_reply > self.context_window
