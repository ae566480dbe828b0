"""Transcript: the prepared messages shared as they are, the loop's own appended after."""

from __future__ import annotations

from openprogram_lsp.core.chunked import Chunked
from openprogram_lsp.core.transcript import Transcript, content_chars
from openprogram_lsp.core.types import Message


def test_a_transcript_reads_as_prefix_then_its_own_messages() -> None:
    prefix = Chunked(Message(role="user", content=f"m{i}") for i in range(5))
    convo = Transcript(prefix, chars=10)
    convo.append(Message(role="assistant", content="reply"))
    convo.extend([Message(role="tool", content="out", tool_call_id="c")])
    plain = [*prefix, *convo.added]
    assert list(convo) == plain == convo and len(convo) == 7 and len(prefix) == 5
    assert convo[-1].content == "out" and convo[0].content == "m0" and convo[5].role == "assistant"
    assert convo[5:] == plain[5:]
    assert content_chars(convo) == 10 + 8 == sum(len(m.content) for m in plain)
    assert content_chars(plain) == 18
    uncounted = Transcript(list(prefix))  # no count given: summed once
    assert uncounted.content_chars() == 10 and uncounted != [] and repr(uncounted)
