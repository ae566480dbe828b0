"""A runtime's table of pending agent questions: thread-safe, first answer wins."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.core.ids import new_id
from openprogram_lsp.core.types import Question
from openprogram_lsp.events.bus import EventBus, make_event


@dataclass(slots=True)
class _Pending:
    question: Question
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[str | None]
    claimed: bool = False


class QuestionRegistry:
    """Pending questions keyed by id; the first answer (or rejection) claims a question."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}

    @property
    def bus(self) -> EventBus:
        return self._bus

    def new_question(self, question: str, *, options: list[str] | None = None,
                     session_id: str | None = None, turn_id: str | None = None,
                     allow_free_text: bool = True) -> Question:
        """Build a question with a fresh id."""
        return Question(question_id=new_id("q"), question=question, options=options or None,
                        session_id=session_id, turn_id=turn_id, allow_free_text=allow_free_text)

    def session_of(self, question_id: str) -> str | None:
        """The session of a pending question, if it is pending."""
        with self._lock:
            pending = self._pending.get(question_id)
        return pending.question.session_id if pending else None

    def open(self, question: Question) -> asyncio.Future[str | None]:
        """Register a question on the running loop and emit ``question.asked``."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[str | None] = loop.create_future()
        with self._lock:
            self._pending[question.question_id] = _Pending(question, loop, fut)
        self.bus.emit(make_event("question.asked", question.payload(),
                                 session_id=question.session_id, turn_id=question.turn_id))
        return fut

    async def ask(self, question: Question, *, timeout: float | None = None) -> str | None:
        """Open a question and wait for its answer; None when rejected or timed out."""
        fut = self.open(question)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except TimeoutError:
            self.reject(question.question_id, reason="timeout")
            return None
        finally:
            with self._lock:
                self._pending.pop(question.question_id, None)

    def answer(self, question_id: str, answer: str) -> bool:
        """Answer a question; True when this answer was the first."""
        return self._claim(question_id, answer, "question.replied", {"answer": answer})

    def reject(self, question_id: str, *, reason: str = "rejected") -> bool:
        """Withdraw or decline a question; True when it was still pending."""
        return self._claim(question_id, None, "question.rejected", {"reason": reason})

    def _claim(self, question_id: str, value: str | None, event_type: str,
               extra: dict[str, str]) -> bool:
        with self._lock:
            pending = self._pending.get(question_id)
            if pending is None:
                return False
            if pending.claimed:
                return False
            pending.claimed = True
        q = pending.question

        def _resolve() -> None:
            if not pending.future.done():
                pending.future.set_result(value)

        pending.loop.call_soon_threadsafe(_resolve)
        self.bus.emit(make_event(event_type, {"question_id": question_id, **extra},
                                 session_id=q.session_id, turn_id=q.turn_id))
        return True

    def discard(self, question_id: str) -> None:
        """Forget a question once its asker stopped waiting."""
        with self._lock:
            self._pending.pop(question_id, None)

    def get(self, question_id: str) -> Question:
        """Return a pending question or raise NotFound."""
        with self._lock:
            pending = self._pending.get(question_id)
        if pending is None:
            raise NotFound(f"no pending question {question_id!r}")
        return pending.question

    def pending(self) -> list[Question]:
        """Questions still waiting for an answer."""
        with self._lock:
            return [p.question for p in self._pending.values() if not p.claimed]

    def reject_turn(self, turn_id: str, *, reason: str = "cancelled") -> int:
        """Withdraw every pending question of a turn; returns how many."""
        ids = [q.question_id for q in self.pending() if q.turn_id == turn_id]
        return sum(self.reject(qid, reason=reason) for qid in ids)
