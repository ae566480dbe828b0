"""What a process's first turn builds, built ahead while the editor is idle (issue 33).

A turn of a fresh server built, on its way to its first edit, every tool's JSON schema (the
specs offered to the model), the system prompt (its files read from the package), the new
session's directory (a git repository and its records) and the validators of the turn's
models (``core.types`` builds them on first use, so a start does not pay for them): tens of
ms of a first edit that later edits make in a few ms. ``turn_steps`` lists that work as small
steps, each a few ms; the server runs them one per loop iteration after ``initialized``
(``lsp.server``), so a request that arrives meanwhile waits for one step at most, and the
models are built on the loop, where a turn would build them (only the session's directory
is made on a thread: file system calls). A step a turn already took finds it done.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from pydantic import BaseModel

from openprogram_lsp.agent.prompts import system_prompt
from openprogram_lsp.context.commit import ContextCommit
from openprogram_lsp.core import types
from openprogram_lsp.core.localfs import small_write_inline

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher.services import Services

Step = Callable[[], object]


def deferred_models(*modules: object) -> list[type[BaseModel]]:
    """The models of ``modules`` whose validators are still to build."""
    return [cls for module in modules for cls in vars(module).values()
            if isinstance(cls, type) and issubclass(cls, BaseModel)
            and cls.__module__ == getattr(module, "__name__", None)
            and not cls.__pydantic_complete__]


def build_model(cls: type[BaseModel]) -> None:
    """Build a deferred model's validator and serializer now (nothing when built already)."""
    if not cls.__pydantic_complete__:
        cls.model_rebuild()


def turn_steps(services: Services, models: Iterable[type[BaseModel]] = ()) -> Iterator[Step]:
    """The steps, about in the order a turn needs them: ``models`` (a transport's own: its
    chat request's), each tool's spec, the system prompt's files, the mount table, the turn's
    models."""
    models = list(models)
    if models:
        yield lambda: build_model(models[0])
    tools = services.tools.tools()
    for tool in tools:
        yield tool.spec
    yield lambda: system_prompt(str(services.workspace), [t.name for t in tools])
    # the mount table a file tool's first write reads (whether it may write on the loop)
    yield lambda: small_write_inline(os.path.realpath(services.workspace), ".", 0)
    for cls in [*models[1:], *deferred_models(types), ContextCommit]:
        yield lambda cls=cls: build_model(cls)  # type: ignore[misc]


async def warm_up(services: Services, models: Iterable[type[BaseModel]] = ()) -> None:
    """Read the session listing (what editors ask for first: ``sessions/.listing`` parsed
    and sorted once, a few ms at 1,000 sessions), then run ``turn_steps`` on the running loop,
    one step per iteration, while a thread makes the next new session's directory
    (``store.spare_session``: file system calls only)."""
    spare = asyncio.ensure_future(asyncio.to_thread(services.store.spare.prepare))
    services.store.session_page(limit=0)
    await asyncio.sleep(0)
    for step in turn_steps(services, models):
        step()
        await asyncio.sleep(0)
    await spare
    # the spare's directory changed the sessions directory's mtime: the listing looks at it
    # again here (one scandir) rather than in the editor's next request
    services.store.session_page(limit=0)
