"""Editor settings: validation, partial application, flag precedence, client features."""

from __future__ import annotations

from lsprotocol import types

from openprogram_lsp.lsp.settings import Settings, client_features, parse_options


def test_parse_options_camel_case_and_section() -> None:
    options, problem = parse_options({"openprogram": {"permissionMode": "bypass",
                                                      "approvalTimeout": 5,
                                                      "rules": [{"tool": "run_command",
                                                                 "decision": "deny",
                                                                 "pattern": "rm *"}]}})
    assert problem is None
    assert options.permission_mode == "bypass"
    settings = Settings(options=options)
    assert settings.approval_timeout == 5
    assert settings.question_timeout == 600
    [rule] = settings.rules()
    assert (rule.tool, rule.decision, rule.value) == ("run_command", "deny", "rm *")
    assert (rule.kind, rule.origin) == ("pattern", "settings")


def test_bad_fields_are_named_and_dropped() -> None:
    options, problem = parse_options({"model": "offline", "permissionMode": "yolo",
                                      "questionTimeout": -1})
    assert problem is not None
    assert "permissionMode" in problem and "questionTimeout" in problem
    assert options.model == "offline"
    assert options.permission_mode is None
    assert parse_options("nope")[1] is not None
    assert parse_options(None) == (parse_options({})[0], None)


def test_flag_wins_over_options() -> None:
    options, _ = parse_options({"permissionMode": "bypass"})
    assert Settings(options=options).permission_mode == "bypass"
    assert Settings(flag_mode="plan", options=options).permission_mode == "plan"
    assert Settings().permission_mode == "ask"


def test_client_features() -> None:
    caps = types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        experimental={"openprogram": {"permissions": True, "questions": False}})
    features = client_features(caps)
    assert features.permissions and not features.questions and features.work_done_progress
    plain = client_features(types.ClientCapabilities())
    assert not plain.permissions and not plain.questions and not plain.work_done_progress
