"""``serve``: the server for one editor on stdio, or for several on 127.0.0.1:PORT."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from openprogram_lsp.config.sections.core import CoreSettings
from openprogram_lsp.core.errors import OpenProgramError
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.lsp.framing import DEFAULT_MAX_FRAME
from openprogram_lsp.lsp.host import ServerHost
from openprogram_lsp.lsp.logs import configure_logging
from openprogram_lsp.lsp.server import build_server, flag_mode_of
from openprogram_lsp.lsp.stdio import serve_stdio
from openprogram_lsp.lsp.tcp import TcpOptions, serve_tcp
from openprogram_lsp.lsp.unusable import serve_unusable

DispatcherFactory = Callable[[], Dispatcher]


def serve(args: argparse.Namespace, build: DispatcherFactory | None = None) -> int:
    """Run the server for one editor on stdio, or for several on 127.0.0.1:PORT (``--tcp``)."""
    log_handler = configure_logging(getattr(args, "log_file", None))
    if build is None:
        raise RuntimeError("serve() needs a dispatcher factory (see cli.cmd_serve)")
    try:
        dispatcher = build()
    except (OSError, OpenProgramError) as exc:  # an unusable state root, a bad setting
        detail = exc.message if isinstance(exc, OpenProgramError) else (
            f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
        reason = f"openprogram-lsp cannot start: {detail} (check OPENPROGRAM_HOME)"
        sys.stderr.write(reason + "\n")
        if getattr(args, "tcp", None) is not None:
            return 2
        return serve_unusable(reason, sys.stdin.buffer, sys.stdout.buffer)
    mode = flag_mode_of(getattr(args, "permission_mode", None))
    settings = dispatcher.services.settings
    max_frame = settings.get(CoreSettings).max_frame_bytes if settings else DEFAULT_MAX_FRAME
    port = getattr(args, "tcp", None)
    if port is not None:
        host = ServerHost(dispatcher, flag_mode=mode, single=False)
        host.log_handler = log_handler
        options = TcpOptions(port=int(port), token_file=getattr(args, "token_file", None),
                             idle_exit=getattr(args, "idle_exit", None), max_frame=max_frame)
        return serve_tcp(host, options, lambda: build_server(host=host))
    host = ServerHost(dispatcher, flag_mode=mode, single=True)
    host.log_handler = log_handler
    return serve_stdio(build_server(host=host), sys.stdin.buffer, sys.stdout.buffer,
                       max_frame=max_frame)
