import asyncio
import threading

import pytest

from openprogram_lsp.core.errors import NotFound
from openprogram_lsp.events.bus import Event, EventBus
from openprogram_lsp.events.questions import QuestionRegistry


async def test_first_answer_wins_and_events_flow() -> None:
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)
    reg = QuestionRegistry(bus)
    q = reg.new_question("Which?", options=["a", "b"], session_id="s")
    task = asyncio.create_task(reg.ask(q, timeout=5))
    await asyncio.sleep(0)
    assert reg.get(q.question_id).question == "Which?"
    assert reg.answer(q.question_id, "a") is True
    assert reg.answer(q.question_id, "b") is False
    assert await task == "a"
    assert [e.type for e in seen] == ["question.asked", "question.replied"]
    with pytest.raises(NotFound):
        reg.get(q.question_id)


async def test_answer_from_another_thread() -> None:
    reg = QuestionRegistry(EventBus())
    q = reg.new_question("Name?")
    task = asyncio.create_task(reg.ask(q, timeout=5))
    await asyncio.sleep(0)
    t = threading.Thread(target=reg.answer, args=(q.question_id, "Ada"))
    t.start()
    assert await task == "Ada"
    t.join()


async def test_timeout_rejects() -> None:
    bus = EventBus()
    seen: list[str] = []
    bus.subscribe(lambda e: seen.append(e.type))
    reg = QuestionRegistry(bus)
    assert await reg.ask(reg.new_question("late?"), timeout=0.01) is None
    assert seen == ["question.asked", "question.rejected"]


async def test_reject_turn_withdraws_its_questions() -> None:
    reg = QuestionRegistry(EventBus())
    q1 = reg.new_question("1", turn_id="t1")
    q2 = reg.new_question("2", turn_id="t2")
    f1 = reg.open(q1)
    reg.open(q2)
    assert reg.reject_turn("t1") == 1
    assert await f1 is None
    assert [q.question_id for q in reg.pending()] == [q2.question_id]
