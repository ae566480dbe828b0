"""The built-in tools, each confined to the workspace."""

from openprogram_lsp.tools.base import Tool
from openprogram_lsp.tools.builtin.ask import AskUser
from openprogram_lsp.tools.builtin.background import CommandOutput, CommandStop, Jobs
from openprogram_lsp.tools.builtin.command import RunCommand
from openprogram_lsp.tools.builtin.files import EditFile, ListDir, MultiEdit, WriteFile
from openprogram_lsp.tools.builtin.find import FindFiles
from openprogram_lsp.tools.builtin.plan import TodoWrite
from openprogram_lsp.tools.builtin.read import ReadFile
from openprogram_lsp.tools.builtin.search import Grep
from openprogram_lsp.tools.builtin.web import WebFetch


def builtin_tools() -> list[Tool]:
    """Fresh instances of every built-in tool (the command tools share their background
    jobs)."""
    jobs = Jobs()
    return [ReadFile(), ListDir(), FindFiles(), Grep(), WriteFile(), EditFile(), MultiEdit(),
            RunCommand(jobs), CommandOutput(jobs), CommandStop(jobs), TodoWrite(), WebFetch(),
            AskUser()]


__all__ = ["builtin_tools"]
