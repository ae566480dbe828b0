"""Every failure a user can cause becomes one line on stderr and a non-zero exit code."""

from __future__ import annotations

import errno
import logging
import sys

from openprogram_lsp.core.errors import OpenProgramError

PROG = "openprogram-lsp"
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A user error the command line reports as one line, with an optional hint."""

    def __init__(self, message: str, hint: str | None = None, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code


def error_line(message: str, hint: str | None = None) -> str:
    """``openprogram-lsp: error: MESSAGE; HINT`` on one line (newlines folded)."""
    text = f"{PROG}: error: {message}" + (f"; {hint}" if hint else "")
    return " ".join(text.split("\n")).rstrip()


def report(message: str, hint: str | None = None) -> None:
    """Write one error line to stderr."""
    sys.stderr.write(error_line(message, hint) + "\n")
    sys.stderr.flush()


def explain(exc: BaseException) -> tuple[str, str | None, int]:
    """(message, hint, exit code) for an exception; unknown ones are internal errors."""
    if isinstance(exc, CliError):
        return exc.message, exc.hint, exc.code
    if isinstance(exc, OpenProgramError):
        return exc.message, None, EXIT_USAGE
    if _git_missing(exc):
        return ("git was not found on PATH", "install git (Debian/Ubuntu: sudo apt-get install "
                "git) and try again", EXIT_USAGE)
    if isinstance(exc, OSError):
        if exc.errno == errno.EADDRINUSE:
            return ("that address is already in use", "another process listens on the port; "
                    "pick another one with --tcp PORT", EXIT_USAGE)
        what = exc.strerror or exc.__class__.__name__
        name = exc.filename if exc.filename is not None else ""
        where = f" {name}" if name else ""
        return (f"cannot use{where}: {what}", "check the path (--home, OPENPROGRAM_HOME, "
                "--workspace) exists and is writable", EXIT_USAGE)
    return (f"internal error: {exc.__class__.__name__}: {exc}",
            "this is a bug; rerun with --debug for the traceback", EXIT_INTERNAL)


def _git_missing(exc: BaseException) -> bool:
    if isinstance(exc, FileNotFoundError) and str(exc.filename) in ("git", "git.exe"):
        return True
    return exc.__class__.__name__ == "GitCommandNotFound"


class OneLineFormatter(logging.Formatter):
    """Log records without tracebacks (``--debug`` shows them)."""

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info = record.exc_text = record.stack_info = None
        try:
            return super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved
