from openprogram_lsp.core.errors import InvalidParams, NotFound, ProviderError
from openprogram_lsp.core.ids import is_safe_id, new_id, now_iso
from openprogram_lsp.core.types import Node, ToolCallRecord, TurnResult, Usage


def test_ids_are_unique_sortable_and_safe() -> None:
    ids = [new_id("u") for _ in range(1000)]
    assert len(set(ids)) == 1000
    assert all(is_safe_id(i) for i in ids)
    assert not is_safe_id("../x") and not is_safe_id("")
    assert now_iso().endswith("Z")


def test_wire_is_camel_case_and_accepts_both_spellings() -> None:
    node = Node(id="a", role="assistant", created_at="t",
                tool_calls=[ToolCallRecord(id="c", name="read_file", kind="read")])
    wire = node.wire()
    assert wire["createdAt"] == "t" and wire["toolCalls"][0]["name"] == "read_file"
    assert Node.model_validate(wire) == node
    result = TurnResult(session_id="s", user_node_id="u", assistant_node_id="a", head_id="a",
                        status="done")
    assert result.wire()["checkpoint"] is None
    assert result.wire()["usage"] == {"inputTokens": 0, "outputTokens": 0}


def test_usage_adds() -> None:
    total = Usage(input_tokens=1, output_tokens=2).add(Usage(input_tokens=3, output_tokens=4,
                                                             cache_read_tokens=5))
    assert (total.input_tokens, total.output_tokens, total.cache_read_tokens) == (4, 6, 5)


def test_errors_carry_json_rpc_codes() -> None:
    assert InvalidParams("x").code == -32602
    assert NotFound("x").code == -32001
    err = ProviderError("rate limited", provider="openai", retryable=True, status=429)
    assert str(err) == "openai: rate limited" and err.retryable
