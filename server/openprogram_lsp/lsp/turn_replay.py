"""What each running turn has streamed so far, for an editor that subscribes mid-turn.

The host hands every event it publishes to ``record`` (on the server loop, in the order it
went out). From a turn's ``turn.started`` to its ``turn.finished`` its notifications are kept,
consecutive stream deltas joined into one; ``openprogram/subscribe`` with ``replay: true``
sends them to the subscribing connection only, marked ``replayed: true``, right after it is
subscribed and in the same step, so every later event reaches it live, after them, and none
twice. A finished turn is dropped. A turn keeps at most ``MAX_BYTES`` of stream text and
command output; past that its deltas are left out (its replayed ``turn.started`` then has
``replayTruncated: true``) and its other events still kept.

A subagent usually outlives the turn that spawned it (``agent`` returns at once): its
``subagent.started`` is kept until its ``subagent.ended`` and replayed first when the turn that
carried it is gone, so a late subscriber still has the subagent's section to stream into.
"""

from __future__ import annotations

from typing import Any

MAX_BYTES = 4 * 1024 * 1024
"""Stream text (text, thoughts, command output) one running turn keeps for replays."""
MAX_EVENTS = 20_000
"""Events one running turn keeps for replays (beyond: only turn.finished matters)."""
JOINED = frozenset({"text.delta", "thought.delta", "tool.output"})


class _Turn:
    __slots__ = ("events", "size", "truncated")

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.size = 0
        self.truncated = False


class TurnReplay:
    """The notifications of the running turns, by session."""

    def __init__(self) -> None:
        self._turns: dict[str, _Turn] = {}  # turn id -> what it streamed
        self._sessions: dict[str, list[str]] = {}  # session id -> its running turn ids
        self._agents: dict[str, dict[str, dict[str, Any]]] = {}  # session -> agent -> started

    def record(self, session_id: str | None, turn_id: str | None, kind: str,
               payload: dict[str, Any]) -> None:
        """Note one published notification (``payload``, as sent) of a session's turn."""
        if session_id and kind in ("subagent.started", "subagent.ended"):
            self._agent(session_id, kind, payload)
        if not session_id or not turn_id:
            return
        if kind == "turn.started":
            self._turns[turn_id] = _Turn()
            self._sessions.setdefault(session_id, []).append(turn_id)
        turn = self._turns.get(turn_id)
        if turn is None:
            return
        if kind == "turn.finished":
            del self._turns[turn_id]
            ids = self._sessions.get(session_id, [])
            if turn_id in ids:
                ids.remove(turn_id)
            if not ids:
                self._sessions.pop(session_id, None)
            return
        if kind in JOINED:
            self._delta(turn, kind, payload)
        elif len(turn.events) < MAX_EVENTS:
            turn.events.append(payload)

    def _agent(self, session_id: str, kind: str, payload: dict[str, Any]) -> None:
        agent_id = (payload.get("data") or {}).get("agentId")
        if not isinstance(agent_id, str):
            return
        running = self._agents.setdefault(session_id, {})
        if kind == "subagent.started" and len(running) < MAX_EVENTS:
            running[agent_id] = payload
        else:
            running.pop(agent_id, None)
        if not running:
            del self._agents[session_id]

    @staticmethod
    def _delta(turn: _Turn, kind: str, payload: dict[str, Any]) -> None:
        data = payload.get("data") or {}
        text = data.get("text")
        if not isinstance(text, str):
            return
        if turn.size + len(text) > MAX_BYTES or len(turn.events) >= MAX_EVENTS:
            turn.truncated = True
            return
        turn.size += len(text)
        last = turn.events[-1] if turn.events else None
        if last is not None and last.get("type") == kind and \
                (last.get("data") or {}).get("toolCallId") == data.get("toolCallId"):
            last["data"] = {**last["data"], "text": last["data"]["text"] + text}
            return
        turn.events.append({**payload, "data": dict(data)})

    def of_session(self, session_id: str) -> list[dict[str, Any]]:
        """The notifications to replay to a subscriber of ``session_id``, oldest first: the
        running subagents whose spawning turn has ended, then the running turns."""
        out: list[dict[str, Any]] = []
        ids = self._sessions.get(session_id, [])
        carried = {(e.get("data") or {}).get("agentId") for t in ids for e in self._turns[t].events
                   if e.get("type") == "subagent.started"}
        for agent_id, started in self._agents.get(session_id, {}).items():
            if agent_id not in carried:
                out.append({**started, "replayed": True})
        for turn_id in ids:
            turn = self._turns[turn_id]
            for i, event in enumerate(turn.events):
                marked = {**event, "replayed": True}
                if i == 0 and turn.truncated:
                    marked["replayTruncated"] = True
                out.append(marked)
        return out
