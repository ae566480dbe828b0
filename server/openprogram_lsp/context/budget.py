"""Token budget: a network-free estimator, per-model calibration, window and output reserve."""

from __future__ import annotations

import atexit
import json
import logging
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from openprogram_lsp.core.fsutil import atomic_write
from openprogram_lsp.core.images import image_tokens
from openprogram_lsp.core.types import Message, ToolSpec

log = logging.getLogger(__name__)

MESSAGE_OVERHEAD = 4
TOOL_OVERHEAD = 5
MIN_RESERVE = 256
# Calibration bounds. Real tokenizers count within about -20% .. x4 of the estimator (dense
# English prose is the low end, CJK and emoji the high one); a server reporting less than half
# the estimate is counting something else (only the uncached part, a fixed placeholder), so its
# figure is suspect and ignored, and no ratio lowers the estimate by more than a fifth (the
# requests' output room, ``TurnPrep.reply_tokens``, keeps a 5% margin besides).
SUSPECT_BELOW = 0.5
RATIO_MIN = 0.8
RATIO_MAX = 4.0
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def estimate_text(text: str) -> int:
    """Tokens in a text: ~4 ASCII characters a token, ~1 token per wide (e.g. CJK) character."""
    if not text:
        return 0
    n = len(text)
    if text.isascii():
        return (n + 3) // 4
    wide = (len(text.encode("utf-8", "surrogatepass")) - n) // 2
    return (n - wide + 3) // 4 + wide


def _plain(text: str) -> bool:
    """Whether a string is ASCII that JSON writes as it is (no quote, backslash or control)."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def estimate_json(value: Any) -> int:
    """Tokens of the JSON of a tool call's arguments, ``estimate_text`` of their encoding.

    The usual case, a flat object of plain ASCII strings, is measured without encoding it:
    ``{"k": "v", ...}`` is 8 characters per item beyond the strings themselves.
    """
    if type(value) is dict and value:
        n = 0
        for k, v in value.items():
            if type(k) is not str or type(v) is not str or not (_plain(k) and _plain(v)):
                break
            n += len(k) + len(v) + 8
        else:
            return (n + 3) // 4
    return estimate_text(_ENCODER.encode(value))


def thought_tokens(t: Mapping[str, Any]) -> int:
    """Tokens of one stored thought as it goes back (``Thought`` fields): its text, and a
    signature, redacted data or a tool call's ``extra_content`` that travels with it."""
    return (MESSAGE_OVERHEAD + estimate_text(t.get("text") or "")
            + (len(t.get("signature") or "") + len(t.get("redacted") or "")) // 4
            + (estimate_json(t["extra"]) if t.get("extra") else 0))


def estimate_message(m: Message) -> int:
    """Tokens of one message, tool calls and thoughts included, plus a per-message overhead."""
    total = MESSAGE_OVERHEAD + estimate_text(m.content)
    for c in m.tool_calls:
        total += MESSAGE_OVERHEAD + estimate_text(c.name) + estimate_json(c.arguments)
    for t in m.thoughts:
        total += thought_tokens(t.model_dump(exclude_none=True))
    for i in m.images:
        total += image_tokens(i.width, i.height)
    return total


def estimate_messages(messages: Iterable[Message]) -> int:
    """Tokens of several messages."""
    return sum(estimate_message(m) for m in messages)


_tool_tokens: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], int]] = {}


def estimate_tools(tools: Iterable[ToolSpec]) -> int:
    """Tokens of the tool schemas as offered to the model (name, description, parameters).

    Remembered for the same spec objects (a registry hands out the same ones every turn; a
    spec is never changed): the schemas are not serialised again each turn."""
    specs = tuple(tools)
    key = tuple(map(id, specs))
    hit = _tool_tokens.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], specs, strict=True)):
        return hit[1]
    tokens = sum(TOOL_OVERHEAD + estimate_text(json.dumps(
        {"name": t.name, "description": t.description, "parameters": t.input_schema},
        ensure_ascii=False)) for t in specs)
    if len(_tool_tokens) >= 64:
        _tool_tokens.clear()
    _tool_tokens[key] = (specs, tokens)  # holding the specs keeps their ids from being reused
    return tokens


def resolve_window(provider_window: int, override: int | None = None) -> int:
    """The context window: the configured override (``context.window``), else the provider's."""
    if override is not None:
        return override
    return max(1024, int(provider_window or 0))


def output_reserve(max_output_tokens: int, window: int) -> int:
    """Tokens kept free for the reply: the requested maximum, at most a quarter of the window."""
    return max(1, min(max_output_tokens, max(MIN_RESERVE, window // 4)))


def _bounded(ratio: float) -> float:
    return min(RATIO_MAX, max(RATIO_MIN, ratio))


class Calibration:
    """Per-model ratio of reported prompt tokens to estimated ones (an exponential average).

    The estimator is multiplied by this ratio; ``observe`` feeds the provider's reported usage
    back after each turn, so the estimate converges on the real count without any tokenizer.
    A report below ``SUSPECT_BELOW`` of the estimate is ignored (logged once per model), and
    the ratio stays within ``RATIO_MIN`` .. ``RATIO_MAX`` (a file written before these bounds
    is read within them), so a server that under-reports cannot shrink the estimate and send
    requests larger than the window.
    The file is rewritten only when a ratio moved by ``SAVE_STEP`` (relative) from the value
    saved, and then at most once every ``SAVE_EVERY`` seconds (a ratio that still moves is
    written by the first observation after that, and at the interpreter's exit): a converged
    ratio costs no file write per turn, a moving one no write on most turns (it moves on about
    every other turn), and a killed process loses at most that many seconds of drift.
    """

    SAVE_STEP = 0.005
    SAVE_EVERY = 30.0

    def __init__(self, path: Path | None = None, *, alpha: float = 0.3) -> None:
        self.path = path
        self.alpha = alpha
        self._lock = threading.Lock()
        self._data: dict[str, dict[str, float]] | None = None
        self._saved: dict[str, float] = {}  # ratio per model as the file has it
        self._saved_at = float("-inf")  # time.monotonic() of the last write
        self._dirty = False  # a moved ratio waits for SAVE_EVERY (or the exit)
        self.suspect: dict[str, int] = {}  # reports ignored as suspect, per model

    def _load(self) -> dict[str, dict[str, float]]:
        if self._data is None:
            self._data = {}
            if self.path is not None and self.path.exists():
                try:
                    raw = json.loads(self.path.read_bytes())
                    self._data = {str(k): {"ratio": _bounded(float(v["ratio"])),
                                           "samples": float(v.get("samples", 1))}
                                  for k, v in raw.items()}
                    self._saved = {k: v["ratio"] for k, v in self._data.items()}
                except (OSError, ValueError, KeyError, TypeError, AttributeError):
                    log.warning("calibration file %s is unreadable; starting afresh", self.path)
        return self._data

    def ratio(self, model: str) -> float:
        """The current ratio for a model (1.0 before any observation)."""
        with self._lock:
            entry = self._load().get(model)
            return entry["ratio"] if entry else 1.0

    def samples(self, model: str) -> int:
        """How many observations a model's ratio is based on."""
        with self._lock:
            entry = self._load().get(model)
            return int(entry["samples"]) if entry else 0

    def observe(self, model: str, estimated: int, reported: int) -> float:
        """Fold one (estimate, reported) pair into the model's ratio and return the new ratio."""
        if estimated <= 0 or reported <= 0:
            return self.ratio(model)
        if reported < SUSPECT_BELOW * estimated:
            with self._lock:
                seen = self.suspect.get(model, 0)
                self.suspect[model] = seen + 1
            if not seen:
                log.warning("model %s reported %d prompt tokens for about %d estimated; "
                            "ignoring reports below %d%% of the estimate", model, reported,
                            estimated, round(100 * SUSPECT_BELOW))
            return self.ratio(model)
        sample = _bounded(reported / estimated)
        with self._lock:
            data = self._load()
            entry = data.get(model)
            if entry is None:
                entry = {"ratio": sample, "samples": 1}
            else:
                entry = {"ratio": entry["ratio"] + self.alpha * (sample - entry["ratio"]),
                         "samples": entry["samples"] + 1}
            data[model] = entry
            saved = self._saved.get(model)
            if saved is None or abs(entry["ratio"] - saved) >= self.SAVE_STEP * saved:
                if saved is None or time.monotonic() - self._saved_at >= self.SAVE_EVERY:
                    self._save(data)
                elif self.path is not None and not self._dirty:
                    self._dirty = True
                    _unsaved.add(self)
            return entry["ratio"]

    def flush(self) -> None:
        """Write a ratio still waiting for ``SAVE_EVERY`` (run at the interpreter's exit; a
        file whose directory went meanwhile, a removed home, is not made again)."""
        with self._lock:
            if not self._dirty or self._data is None:
                return
            if self.path is not None and not self.path.parent.is_dir():
                self._dirty = False
                return
            self._save(self._data)

    def _save(self, data: dict[str, dict[str, float]]) -> None:
        self._dirty = False
        self._saved_at = time.monotonic()
        _unsaved.discard(self)
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True))
            self._saved = {k: v["ratio"] for k, v in data.items()}
        except OSError:
            log.warning("could not save calibration to %s", self.path, exc_info=True)


_unsaved: weakref.WeakSet[Calibration] = weakref.WeakSet()


@atexit.register
def _flush_unsaved() -> None:
    for calibration in list(_unsaved):
        calibration.flush()
