"""The domain's typed results as wire dicts: validated by the ``wire`` models, camelCase here."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from openprogram_lsp.lsp import wire as w
from openprogram_lsp.store.checkpoints.results import CheckpointDiff, RestoreOutcome

R = TypeVar("R", bound=w.Result)


def plain(value: Any) -> Any:
    """A dataclass (nested ones too) as the dict of its snake_case fields; else the value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def model(kind: type[R], value: Any) -> R:
    """``value`` (a domain dataclass or a snake_case dict) as the wire model ``kind``."""
    return kind.model_validate(plain(value))


def dump(kind: type[w.Result], value: Any) -> dict[str, Any]:
    """``value`` through the wire model ``kind``, dumped as the camelCase JSON object."""
    return model(kind, value).wire()


def diff(value: CheckpointDiff) -> dict[str, Any]:
    """``openprogram/checkpointDiff``."""
    return dump(w.CheckpointDiffResult, value)


def restore(value: RestoreOutcome) -> dict[str, Any]:
    """``openprogram/restore`` and ``restoreHunk`` (``safetyCheckpointId`` always sent)."""
    return dump(w.RestoreResult, value)


def code_restore(value: RestoreOutcome) -> dict[str, Any]:
    """The code switch of ``checkout``/``fork`` with ``restoreCode``: its set fields only."""
    out = {"codeCheckpointId": value.code_checkpoint_id, "restored": value.restored,
           "safetyCheckpointId": value.safety_checkpoint_id, "conflicts": value.conflicts,
           "skipped": value.skipped}
    return {k: v for k, v in out.items() if v is not None}
