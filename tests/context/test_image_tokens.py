"""Images in the context budget count by the turn's API's rule: the engine's estimate for the
same history differs by exactly the two rules' difference, and a cached rendering made under
one rule is not reused under the other (the carried prefix and the render cache)."""

from __future__ import annotations

from openprogram_lsp.context.budget import Calibration
from openprogram_lsp.context.engine import ContextEngine
from openprogram_lsp.context.types import ContextConfig
from openprogram_lsp.core.images import anthropic_tokens, image_rule, openai_tokens
from openprogram_lsp.core.types import Node, ToolCallRecord

IMAGE = {"kind": "image", "uri": "clipboard:a", "path": "a.png", "sha256": "a" * 64,
         "mediaType": "image/png", "width": 1000, "height": 1000, "size": 10}
TOOL_IMAGE = {"sha256": "b" * 64, "mediaType": "image/png", "width": 2048, "height": 4096,
              "size": 10}


def _chain() -> list[Node]:
    call = ToolCallRecord.model_validate({
        "id": "c1", "name": "read_file", "input": {"path": "b.png"}, "status": "completed",
        "output": "b.png: PNG image", "images": [TOOL_IMAGE]})
    return [Node(id="u1", role="user", text="look", metadata={"context": [IMAGE]}),
            Node(id="a1", role="assistant", text="ok", predecessor="u1", tool_calls=[call]),
            Node(id="u2", role="user", text="and?", predecessor="a1")]


def _estimate(engine: ContextEngine, chain: list[Node], rule: str) -> int:
    token = image_rule.set(rule)  # type: ignore[arg-type]
    try:
        return engine.prepare(session_id="s", history=chain, system="sys", tools=[],
                              model="m", context_window=200_000).raw_input
    finally:
        image_rule.reset(token)


def test_images_count_by_the_turns_api_rule_and_caches_follow_it() -> None:
    engine = ContextEngine(config=ContextConfig(), calibration=Calibration())
    chain = _chain()
    anthropic = _estimate(engine, chain, "anthropic")
    openai = _estimate(engine, chain, "openai")  # the same session, the next turn
    diff = (anthropic_tokens(1000, 1000) + anthropic_tokens(2048, 4096)
            - openai_tokens(1000, 1000) - openai_tokens(2048, 4096))
    assert anthropic - openai == diff != 0
    assert _estimate(engine, chain, "anthropic") == anthropic  # back again: not stale
    fresh = ContextEngine(config=ContextConfig(), calibration=Calibration())
    assert _estimate(fresh, chain, "openai") == openai  # as a from-scratch rendering
