"""``serve``: the server for one editor on stdio, or for several on 127.0.0.1:PORT.

Over stdio ``initialize`` is answered before anything heavy is imported or built
(``lsp.early``); the server is built after it, so this module imports the rest when it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.lsp.logs import WindowLogHandler, configure_logging
from openprogram_lsp.lsp.unusable import serve_unusable

if TYPE_CHECKING:
    from openprogram_lsp.dispatcher import Dispatcher
    from openprogram_lsp.lsp.early import EarlyStart

DispatcherFactory = Callable[[], "Dispatcher"]
Configure = Callable[[], DispatcherFactory]


def serve(args: argparse.Namespace, configure: Configure) -> int:
    """Run the server for one editor on stdio, or for several on 127.0.0.1:PORT (``--tcp``).

    ``configure`` reads the settings (an error there is the command's one-line error, unless
    ``initialize`` was answered already: then the editor is told) and returns what builds the
    dispatcher (an unusable state root is told to the editor)."""
    log_handler = configure_logging(getattr(args, "log_file", None))
    tcp = getattr(args, "tcp", None) is not None
    try:
        return _serve(args, configure, log_handler, tcp)
    except KeyboardInterrupt:
        if tcp:
            raise  # the CLI's one "interrupted" line and 130
        return 0  # Ctrl-C ends a stdio server cleanly, while it is built too (as serve_stdio)


def _serve(args: argparse.Namespace, configure: Configure, log_handler: WindowLogHandler,
           tcp: bool) -> int:
    early = None
    if not tcp and not sys.stdin.isatty():  # a person typing LSP gains nothing from it
        from openprogram_lsp.lsp.early import answer_initialize

        early = answer_initialize(sys.stdin.buffer, sys.stdout.buffer)
    try:
        build = configure()
    except OpenProgramError as exc:
        if early is None or early.message is None:
            raise
        return _unusable(f"openprogram-lsp cannot start: {exc.message}", early)
    try:
        dispatcher = build()
    except (OSError, OpenProgramError) as exc:  # an unusable state root, a bad setting
        detail = exc.message if isinstance(exc, OpenProgramError) else (
            f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
        reason = f"openprogram-lsp cannot start: {detail} (check OPENPROGRAM_HOME)"
        if tcp:
            sys.stderr.write(reason + "\n")
            return 2
        return _unusable(reason, early)
    from openprogram_lsp.config.sections.core import CoreSettings
    from openprogram_lsp.lsp.framing import DEFAULT_MAX_FRAME
    from openprogram_lsp.lsp.host import ServerHost
    from openprogram_lsp.lsp.server import build_server, flag_mode_of

    mode = flag_mode_of(getattr(args, "permission_mode", None))
    settings = dispatcher.services.settings
    max_frame = settings.get(CoreSettings).max_frame_bytes if settings else DEFAULT_MAX_FRAME
    if tcp:
        from openprogram_lsp.lsp.tcp import TcpOptions, serve_tcp

        host = ServerHost(dispatcher, flag_mode=mode, single=False)
        host.log_handler = log_handler
        options = TcpOptions(port=int(args.tcp), token_file=getattr(args, "token_file", None),
                             idle_exit=getattr(args, "idle_exit", None), max_frame=max_frame,
                             keep_turns=getattr(args, "keep_turns", None) or 0.0)
        return serve_tcp(host, options, lambda: build_server(host=host))
    from openprogram_lsp.lsp.stdio import serve_stdio

    host = ServerHost(dispatcher, flag_mode=mode, single=True)
    host.log_handler = log_handler
    return serve_stdio(build_server(host=host), sys.stdin.buffer, sys.stdout.buffer,
                       max_frame=max_frame, early=early)


def _unusable(reason: str, early: EarlyStart | None) -> int:
    """Every request gets ``reason`` (and the editor is shown it when it was initialized)."""
    sys.stderr.write(reason + "\n")
    return serve_unusable(reason, sys.stdin.buffer, sys.stdout.buffer,
                          read=early.read if early is not None else b"",
                          initialized=early is not None and early.message is not None)
