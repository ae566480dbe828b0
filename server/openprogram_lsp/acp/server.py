"""``openprogram-lsp acp``: the agent on stdio, on one asyncio loop with the dispatcher."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from openprogram_lsp.acp.agent import OpenProgramAgent
from openprogram_lsp.acp.approvals import AcpApprover, AcpAsker
from openprogram_lsp.acp.editor import AcpEditor
from openprogram_lsp.acp.routes import connect
from openprogram_lsp.acp.stdio import open_streams
from openprogram_lsp.acp.toolsources import ToolSources
from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core.types import PermissionMode
from openprogram_lsp.dispatcher import Dispatcher

log = logging.getLogger(__name__)


def configure_logging(log_file: Path | None) -> None:
    """Logs to stderr (warnings) and, when given, everything to a file; never to stdout."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    err = logging.StreamHandler(sys.stderr)
    err.setLevel(logging.WARNING)
    err.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(err)
    root.setLevel(logging.WARNING)
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(log_file, encoding="utf-8")
        fh.setFormatter(logging.Formatter(
            "%(asctime)s %(levelname)s %(name)s [%(threadName)s]: %(message)s"))
        root.addHandler(fh)
        root.setLevel(logging.DEBUG)
        logging.getLogger("openprogram_lsp").setLevel(logging.DEBUG)


def attach(dispatcher: Dispatcher, *, mode: PermissionMode = "ask",
           tool_sources: ToolSources | None = None,
           approval_timeout: float | None = 600.0) -> OpenProgramAgent:
    """An agent over a dispatcher, installed as its approver and asker (on the running loop)."""
    agent = OpenProgramAgent(dispatcher, mode=mode, tool_sources=tool_sources,
                             approval_timeout=approval_timeout)
    dispatcher.services.approver = AcpApprover(agent)
    dispatcher.services.asker = AcpAsker(agent)
    dispatcher.services.editor = AcpEditor(agent)
    dispatcher.agents.attach_loop(asyncio.get_running_loop())
    return agent


async def run(dispatcher: Dispatcher, frames: BinaryIO, *, mode: PermissionMode = "ask",
              tool_sources: ToolSources | None = None,
              approval_timeout: float | None = 600.0) -> None:
    """Serve one client on stdin and the claimed frame pipe until stdin closes."""
    agent = attach(dispatcher, mode=mode, tool_sources=tool_sources,
                   approval_timeout=approval_timeout)
    reader, writer = await open_streams(frames)
    conn = connect(agent, reader, writer)
    try:
        await conn.listen()
    finally:
        await agent.shutdown()
        await conn.close()


def serve(args: argparse.Namespace, frames: BinaryIO, build: Callable[[], Dispatcher],
          tool_sources: Callable[[], ToolSources | None] = lambda: None) -> int:
    """Run the ACP agent on stdin and ``frames`` (see ``stdio.claim_stdout``)."""
    configure_logging(getattr(args, "log_file", None))
    dispatcher = build()
    mode = dispatcher.services.permission_mode
    settings = dispatcher.services.settings
    timeout = settings.get(CoreSettings).approval_timeout if settings is not None else 600.0
    asyncio.run(run(dispatcher, frames, mode=mode, tool_sources=tool_sources(),
                    approval_timeout=timeout))
    return 0
