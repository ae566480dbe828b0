"""The carried idle-gap pass equals the reference scan and microcompact run from scratch, and the
grouped digest equals its definition, over seeded random sessions with idle gaps."""

from __future__ import annotations

import hashlib
import json
import random

from tests.context.convo import SYSTEM, T0, TOOLS, iso

from openprogram_lsp.context.budget import Calibration
from openprogram_lsp.context.commit import ContextCommit, messages_digest
from openprogram_lsp.context.digest import GROUP, DigestState, state_of
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.context.microcompact import gap_points, microcompact
from openprogram_lsp.context.references import RefScan, scan_references
from openprogram_lsp.context.render import flatten
from openprogram_lsp.context.types import ContextConfig, Segment, TurnPrep
from openprogram_lsp.core.chunked import Chunked
from openprogram_lsp.core.types import Message, Node, ToolCallRecord, Usage

CONFIG = ContextConfig(microcompact_min_tokens=20, microcompact_keep_recent=2,
                       gap_threshold_seconds=600)


def plain_digest(messages: list[Message]) -> str:
    """Version 2 as documented: SHA-256 of the groups' SHA-256s (the last group may be
    empty)."""
    def group(ms: list[Message]) -> bytes:
        return hashlib.sha256(b"".join(
            json.dumps(m.wire(), sort_keys=True, ensure_ascii=False).encode() + b"\n"
            for m in ms)).digest()
    full = len(messages) // GROUP * GROUP
    parts = [group(messages[i:i + GROUP]) for i in range(0, full, GROUP)]
    return hashlib.sha256(b"".join([*parts, group(messages[full:])])).hexdigest()


def msgs(n: int, tag: str = "") -> list[Message]:
    return [Message(role="user", content=f"m{i}{tag}") for i in range(n)]


def test_grouped_digest_appended_cut_and_shared() -> None:
    rng = random.Random(4)
    for n in (0, 1, GROUP - 1, GROUP, GROUP + 1, 2 * GROUP + 7):
        ms = msgs(n)
        assert messages_digest(ms) == plain_digest(ms)
        state = DigestState()
        k = rng.randint(0, n)
        state.update(ms[:k])
        state.update(ms[k:])
        assert state.hexdigest() == plain_digest(ms)
        for m in (0, rng.randint(0, n), n):
            assert state.cut(ms, m).hexdigest() == plain_digest(ms[:m])
    old = msgs(3)  # version 1: one SHA-256 over every line
    assert messages_digest(old, 1) == hashlib.sha256(b"".join(
        json.dumps(m.wire(), sort_keys=True, ensure_ascii=False).encode() + b"\n"
        for m in old)).hexdigest() != messages_digest(old)
    base = Chunked(msgs(2 * GROUP + 9))
    state = DigestState()
    state.update(base)
    cache: dict[int, tuple[tuple[Message, ...], bytes]] = {}
    for at in (5, GROUP + 3, 2 * GROUP + 2, 5):  # one message replaced, in each group
        other = base.replaced({at: Message(role="user", content="changed")})
        assert state_of(other, base, state, cache).hexdigest() == plain_digest(list(other))
        assert other.chunks()[1 - (at > GROUP)] is base.chunks()[1 - (at > GROUP)]
    assert state_of(base, base, state, cache).hexdigest() == plain_digest(list(base))


def test_a_carried_reference_scan_equals_the_scan() -> None:
    rng = random.Random(9)
    words = ["alpha.py", "beta", "pkg/gamma.py", "def handler_one", "quoted line of output xx"]
    segs: list[Segment] = []
    scan = RefScan()
    for i in range(120):
        text = " ".join(rng.sample(words, rng.randint(0, 2)))
        calls = [ToolCallRecord(id=f"c{i}", name="read_file", kind="read",
                                input={"path": rng.choice(words[:3])}, status="completed",
                                output=rng.choice(["def handler_one(x):", "quoted line of "
                                                   "output xx", "nothing"]))] \
            if rng.random() < 0.5 else []
        node = Node(id=f"n{i}", role=rng.choice(["user", "assistant"]), text=text,
                    tool_calls=calls or None)
        if segs and rng.random() < 0.2:  # the last one taken back and rendered again
            assert scan.take_back()
            segs.pop()
        segs.append(Segment(node, [], 1, i))
        scan.add(segs[-1], last=True)
        assert scan.referenced == scan_references(segs)
    assert scan.take_back() and not scan.take_back()  # one step back only


def _fresh(prep: TurnPrep) -> tuple[list[Message], list[str], list[str]]:
    """The from-scratch pass over the same rendering: scan, microcompact, flatten."""
    assert prep.args is not None
    segments = list(prep.full_segments)
    gaps, _ = gap_points(segments, threshold=CONFIG.gap_threshold_seconds,
                         last_turn_at=prep.args.last_turn_at, now=prep.args.now or 0.0)
    if not gaps:
        return flatten(segments), [], []
    refs = scan_references(segments)
    new, keys = microcompact(segments, gaps, keep_recent=CONFIG.microcompact_keep_recent,
                             min_tokens=CONFIG.microcompact_min_tokens, protected=refs)
    return flatten(new), keys, sorted(refs)


def test_idle_turns_equal_a_from_scratch_pass() -> None:
    rng = random.Random(11)
    eng = ContextEngine(config=CONFIG, calibration=Calibration())
    chain: list[Node] = []
    clock, last_at = 0.0, None
    cleared = edits = 0
    for t in range(50):
        roll = rng.random()
        if chain and roll < 0.1:  # the last prompt rewritten (a new object): its segment redone
            chain[-2] = chain[-2].model_copy(update={"text": chain[-2].text + " (expanded)"})
        elif len(chain) > 6 and roll < 0.14:  # an edit of history further back
            k = rng.randrange(len(chain) - 4)
            chain[k] = chain[k].model_copy(update={"text": chain[k].text + " (edited)"})
            edits += 1
        clock += rng.choice([30.0, 60.0, 60.0, 2000.0])
        mention = f" see pkg/f{rng.randrange(t + 1)}.py" if rng.random() < 0.3 else ""
        chain.append(Node(id=f"u{t}", role="user", text=f"turn {t}{mention}",
                          predecessor=chain[-1].id if chain else None, created_at=iso(clock)))
        now = T0.timestamp() + clock + rng.choice([0.0, 0.0, 5000.0])
        prep = eng.prepare(session_id="s", history=chain, system=SYSTEM, tools=TOOLS,
                           model="m", context_window=10**7, last_turn_at=last_at, now=now)
        want, keys, protected = _fresh(prep)
        assert [m.wire() for m in prep.messages] == [m.wire() for m in want]
        assert (prep.replaced, prep.protected) == (keys, protected)
        assert prep.history_tokens == sum(s.tokens for s in prep.segments)
        assert prep.transcript()._chars in (None, sum(len(m.content) for m in want))
        assert prep.transcript().content_chars() == sum(len(m.content) for m in want)
        record = eng.after_turn(session_id="s", turn_id=f"a{t}", prep=prep,
                                usage=Usage())
        assert record["messagesDigest"] == plain_digest(want)
        assert ContextCommit.model_validate(record).expanded([n.id for n in chain]).kept \
            == [s.node.id for s in prep.full_segments]
        eng.append_message(prep, Message(role="user", content="hook"))
        assert prep.known is not None and prep.known[0] is prep.messages
        assert prep.known[1].hexdigest() == plain_digest([*want, prep.messages[-1]])
        cleared += bool(keys)
        clock += 5
        calls = [ToolCallRecord(id=f"c{t}_{k * (rng.random() < 0.8)}", name="read_file",
                                kind="read", step=0,
                                input={"path": f"pkg/f{t}.py"}, status="completed",
                                output=f"def handler_{t}_{k}(x):\n"
                                + "    value = compute(x)\n" * rng.randint(0, 12))
                 for k in range(rng.randint(0, 2))]  # now and then a repeated call id
        chain.append(Node(id=f"a{t}", role="assistant", predecessor=f"u{t}", status="done",
                          created_at=iso(clock - 4), text=f"done {t}", tool_calls=calls or None,
                          metadata={"finishedAt": iso(clock)}))
        last_at = iso(clock)
    assert cleared > 12, cleared
    idle = eng.idle  # carried on, taken back a segment, done again only after an edit
    assert idle.fresh <= 1 + edits and idle.taken_back > 2 and idle.carried > 20 * 40, \
        (idle.fresh, edits, idle.taken_back, idle.carried)


def test_a_record_keeps_the_digest_of_its_version() -> None:
    sent = msgs(5, "x")
    base = {"sessionId": "s", "turnId": "t", "model": "m", "contextWindow": 1, "outputReserve": 0,
            "estimate": 0, "estimateInput": 0, "rawEstimateInput": 0, "calibration": 1.0,
            "usageRatio": 0.0, "messages": 5}
    old = ContextCommit.model_validate({**base, "version": 1,
                                        "messagesDigest": messages_digest(sent, 1)})
    new = ContextCommit.model_validate({**base, "messagesDigest": messages_digest(sent)})
    two = ContextCommit.model_validate({**base, "version": 2,
                                        "messagesDigest": messages_digest(sent)})
    assert new.version == 3 and old.sent(sent) and new.sent(sent) and two.sent(sent)
    assert not old.sent(sent[:4]) and not new.sent(sent[:4]) and old.wire()["version"] == 1
    assert not two.sent(sent[:4]) and two.wire()["version"] == 2
