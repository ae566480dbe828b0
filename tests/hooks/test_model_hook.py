"""prompt and agent hooks: the prompt the model gets and how its answer is read."""

from __future__ import annotations

import json

from openprogram_lsp.hooks.config import HookSpec
from openprogram_lsp.hooks.model_hook import judge_prompt, verdict


def test_arguments_stand_where_the_prompt_says_or_after_it() -> None:
    payload = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    inline = judge_prompt(HookSpec("Stop", "Check $ARGUMENTS now", type="prompt"), payload)
    assert inline == f"Check {json.dumps(payload)} now"
    after = judge_prompt(HookSpec("Stop", "Check it", type="prompt"), payload)
    assert after.startswith("Check it\n\n") and after.endswith(json.dumps(payload))


def test_the_answer_is_an_ok_object_however_it_is_wrapped() -> None:
    assert verdict('{"ok": true}') == (True, "")
    assert verdict('```json\n{"ok": false, "reason": " tests failed "}\n```') == (
        False, "tests failed")
    assert verdict('Looking at it: {"ok": false, "reason": "no"} done.') == (False, "no")
    for bad in ("", "yes", '{"ok": "yes"}', '{"decision": "block"}', "[1]", '{"ok": tru'):
        assert verdict(bad) is None
