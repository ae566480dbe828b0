"""A loopback OpenAI-compatible model for long sessions through the real dispatcher.

Each user turn the model reads one workspace file (a ``read_file`` call), then answers in a
short paragraph; a request without tools is the context engine's summariser, answered with a
summary. Replies are chosen from the request itself, so summaries may come at any point. The
usage it reports is honest (the request's size at ~4 bytes a token) or a fixed figure (a server
that under-reports, e.g. ``prompt_tokens: 100`` on every call)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.providers.loopback import LoopbackServer, Received, Reply
from tests.providers.wire import AnthropicStream, Call, OpenAIStream, fragments

from openprogram_lsp.context.budget import estimate_text

FILES = 40


def module_text(i: int) -> str:
    """A small Python module of about 1,200 characters."""
    body = "".join(f"    value_{k} = cfg.get('key_{k}', {k})  # old config API\n"
                   for k in range(18))
    return f'"""Module {i}."""\n\n\ndef handler_{i}(cfg):\n{body}    return value_0\n'


def write_workspace(root: Path) -> None:
    """The files the model reads: ``pkg/module_N.py``."""
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    for i in range(FILES):
        (root / "pkg" / f"module_{i}.py").write_text(module_text(i))


def user_text(turn: int) -> str:
    """The user's message of a turn (about 40 tokens)."""
    return (f"Turn {turn}: look at pkg/module_{turn % FILES}.py and tell me in a sentence or "
            "two how it reads its settings, and whether it still uses the old config API.")


@dataclass
class SessionModel:
    """Stands in for the server's reply queue: ``popleft`` answers the request just received."""

    server: LoopbackServer
    reported_prompt_tokens: int | None = None  # None: honest (request bytes / 4)
    calls: int = 0
    summaries: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)

    def install(self) -> SessionModel:
        """Answer the server's requests from now on."""
        self.server.replies = self  # type: ignore[assignment]
        return self

    def __bool__(self) -> bool:
        return True

    def _usage(self, got: Received) -> dict[str, Any]:
        prompt = (self.reported_prompt_tokens if self.reported_prompt_tokens is not None
                  else len(got.body) // 4)
        return {"prompt_tokens": prompt, "completion_tokens": 40,
                "total_tokens": prompt + 40}

    def popleft(self) -> Reply:
        """The reply to the last request the server received."""
        got = self.server.received[-1]
        body = got.json
        self.requests.append(body)
        self.calls += 1
        usage = self._usage(got)
        if not body.get("tools"):
            self.summaries += 1
            text = (f"Summary {self.summaries}: the user is reviewing pkg/module_*.py one file "
                    "a turn; each reads settings through cfg.get (the old config API). Nothing "
                    "was changed yet; keep answering one file at a time.")
            return Reply(chunks=OpenAIStream(text=[text], usage=usage).events())
        last = body["messages"][-1]
        if last["role"] == "user":
            words = str(last.get("content", "")).split()
            path = next((w for w in words if w.startswith("pkg/")), "pkg/module_0.py")
            call = Call(f"call_{self.calls}", "read_file",
                        fragments({"path": path.rstrip(".,")}, 16))
            return Reply(chunks=OpenAIStream(text=["Let me read it."], calls=[call],
                                             usage=usage).events())
        answer = ("It reads each setting with cfg.get and a literal default, which is the old "
                  "config API; switching to the typed settings object would remove eighteen "
                  "lookups. Nothing else in the file depends on the old API.")
        return Reply(chunks=OpenAIStream(text=[answer], usage=usage).events())


@dataclass
class AnthropicSessionModel(SessionModel):
    """The same session model speaking the Messages API, each reply opening with a signed
    thinking block (extended thinking), which must come back unchanged on later requests."""

    def popleft(self) -> Reply:
        """The reply to the last request the server received."""
        got = self.server.received[-1]
        body = got.json
        self.requests.append(body)
        self.calls += 1
        prompt = (self.reported_prompt_tokens if self.reported_prompt_tokens is not None
                  else len(got.body) // 4)
        usage = {"input_tokens": prompt, "cache_read": 0, "output_tokens": 40}
        if not body.get("tools"):
            self.summaries += 1
            text = (f"Summary {self.summaries}: the user is reviewing pkg/module_*.py one file "
                    "a turn; each reads settings through cfg.get (the old config API). Nothing "
                    "was changed yet; keep answering one file at a time.")
            return Reply(chunks=AnthropicStream(text=[text], **usage).events())
        thinking = [(f"Step {self.calls}: read the file the user named, then answer.",
                     f"EqQBCgIYAhIM{self.calls:08d}c2lnbmF0dXJlLW9mLXN0ZXA=")]
        last = body["messages"][-1]
        said = " ".join(str(b.get("text") or "") for b in last["content"]
                        if isinstance(b, dict) and b.get("type") == "text")
        if last["role"] == "user" and said and not any(
                b.get("type") == "tool_result" for b in last["content"]):
            path = next((w for w in said.split() if w.startswith("pkg/")), "pkg/module_0.py")
            call = Call(f"toolu_{self.calls}", "read_file",
                        fragments({"path": path.rstrip(".,")}, 16))
            return Reply(chunks=AnthropicStream(text=["Let me read it."], calls=[call],
                                                thinking=thinking, **usage).events())
        answer = ("It reads each setting with cfg.get and a literal default, which is the old "
                  "config API; switching to the typed settings object would remove eighteen "
                  "lookups. Nothing else in the file depends on the old API.")
        return Reply(chunks=AnthropicStream(text=[answer], thinking=thinking,
                                            **usage).events())


def request_estimate(body: dict[str, Any]) -> int:
    """A request's input as the estimator counts it (~4 characters a token: contents, call
    arguments, tool schemas; 4 a message), uncalibrated, plus the output tokens it asked for."""
    n = sum(estimate_text(json.dumps(t, ensure_ascii=False)) for t in body.get("tools") or [])
    for m in body["messages"]:
        n += 4 + estimate_text(str(m.get("content") or ""))
        for c in m.get("tool_calls") or []:
            n += 4 + estimate_text(c["function"]["name"]) + estimate_text(
                c["function"]["arguments"])
    return n + int(body.get("max_completion_tokens") or body.get("max_tokens") or 0)


def request_tokens(body: dict[str, Any]) -> int:
    """A request's input size measured from its JSON (bytes / 4, a generous count: the JSON's
    keys and quotes are counted too), plus the output tokens it asked for."""
    sent = {k: body[k] for k in ("messages", "tools") if k in body}
    size = len(json.dumps(sent, ensure_ascii=False).encode()) // 4
    asked = int(body.get("max_completion_tokens") or body.get("max_tokens") or 0)
    return size + asked
