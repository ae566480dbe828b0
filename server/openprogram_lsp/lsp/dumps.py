"""The domain's typed results as wire dicts: validated by the ``wire`` models, camelCase here."""

from __future__ import annotations

import dataclasses
import functools
import logging
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticSerializationError

from openprogram_lsp.core.ports import AgentDefinitionRow
from openprogram_lsp.events.bus import Event
from openprogram_lsp.hooks.listing import HookListing
from openprogram_lsp.lsp import wire as w
from openprogram_lsp.store.blame.agent import Hunk as BlameRun
from openprogram_lsp.store.checkpoints.results import CheckpointDiff, RestoreOutcome

log = logging.getLogger(__name__)

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


def blame(uri: str, path: str, runs: list[BlameRun]) -> dict[str, Any]:
    """``openprogram/blame``: each run of lines with its ``BlameInfo`` fields beside it."""
    hunks = [w.BlameHunk.model_validate({"start_line": r.start, "line_count": r.count,
                                         "kind": r.kind, **plain(r.info)}) for r in runs]
    return w.BlameResult(uri=uri, path=path, hunks=hunks).wire()


def hooks(listing: list[HookListing], warnings: list[str]) -> dict[str, Any]:
    """``openprogram/hooks`` (and ``openprogram-lsp hooks --json``)."""
    return w.HooksResult(hooks=[model(w.HookInfo, h) for h in listing],
                         warnings=warnings).wire()


def agent_definitions(rows: list[AgentDefinitionRow]) -> list[dict[str, Any]]:
    """Agent definitions as ``openprogram/agents`` lists them."""
    return [dump(w.AgentDefinitionInfo, r) for r in rows]


def code_restore(value: RestoreOutcome) -> dict[str, Any]:
    """The code switch of ``checkout``/``fork`` with ``restoreCode``: its set fields only."""
    out = {"codeCheckpointId": value.code_checkpoint_id, "restored": value.restored,
           "safetyCheckpointId": value.safety_checkpoint_id, "conflicts": value.conflicts,
           "skipped": value.skipped}
    return {k: v for k, v in out.items() if v is not None}


_camel = functools.lru_cache(maxsize=4096)(to_camel)  # payload keys are a small, fixed set


def camel_keys(data: dict[str, Any]) -> dict[str, Any]:
    """The top-level keys of ``data`` in camelCase (the values as they are)."""
    return {_camel(k) if "_" in k else k: v for k, v in data.items()}


def error_data(data: Any) -> Any:
    """An error's ``data`` as the wire sends it (a dict's keys in camelCase)."""
    return camel_keys(data) if isinstance(data, dict) else data


@functools.cache
def _renames_inside(kind: type[BaseModel]) -> bool:
    """Whether a model holds another whose fields the wire spells differently (so a payload
    needs the model to be spelled, not only its top-level keys)."""
    def renames(model: type[BaseModel], seen: frozenset[type[BaseModel]]) -> bool:
        for info in model.model_fields.values():
            for sub in _models_in(info.annotation):
                if sub in seen:
                    continue
                if any((f.alias or n) != n for n, f in sub.model_fields.items()) \
                        or renames(sub, seen | {sub}):
                    return True
        return False

    return renames(kind, frozenset({kind}))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def event_data(type: str, data: dict[str, Any]) -> dict[str, Any]:
    """A bus event's snake_case payload as the wire's ``data``: a flat one with its keys
    camelCased, one holding nested models through its ``EVENT_DATA`` model (only the keys the
    payload has, nulls kept)."""
    kind = w.EVENT_DATA.get(type)
    if kind is None or not _renames_inside(kind):
        return camel_keys(data)
    try:
        out = kind.model_validate(data).model_dump(mode="json", by_alias=True,
                                                   exclude_unset=True)
    except (ValidationError, PydanticSerializationError) as exc:
        log.debug("%s payload does not match its wire model (%s); keys camelCased",
                  type, str(exc).splitlines()[:2])
        return camel_keys(data)
    known = set(kind.model_fields) | {f.alias for f in kind.model_fields.values() if f.alias}
    out.update(camel_keys({k: v for k, v in data.items() if k not in known}))
    return out


def notification(event: Event) -> dict[str, Any]:
    """The ``openprogram/event`` params of a bus event: type, sessionId, turnId?, data."""
    out: dict[str, Any] = {"type": event.type, "sessionId": event.session_id,
                           "data": event_data(event.type, event.payload)}
    if event.turn_id is not None:
        out["turnId"] = event.turn_id
    return out
