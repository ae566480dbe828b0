"""Errors users can cause; each carries the JSON-RPC code it answers with."""

from __future__ import annotations

from typing import Any


class OpenProgramError(Exception):
    """Base error: a message for the user and a JSON-RPC error code."""

    code: int = -32603

    def __init__(self, message: str, *, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class InvalidParams(OpenProgramError):
    """Request parameters that do not validate."""

    code = -32602


class NotFound(OpenProgramError):
    """An unknown session, node, checkpoint, question or agent id."""

    code = -32001


class SessionBusy(OpenProgramError):
    """A turn is already running on the session."""

    code = -32002


class BrokenChain(OpenProgramError):
    """A predecessor chain that does not reach a root."""

    code = -32003


class WorkspaceEscape(OpenProgramError):
    """A path that leads outside the workspace."""

    code = -32004


class ConfigError(OpenProgramError):
    """Bad or missing configuration (model spec, API key, mode)."""

    code = -32005


class Unauthorized(OpenProgramError):
    """A TCP client that did not present the server's token."""

    code = -32006


class ProviderError(OpenProgramError):
    """A model provider failed (HTTP, stream or protocol error)."""

    code = -32010

    def __init__(self, message: str, *, provider: str = "", retryable: bool = False,
                 status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(f"{provider}: {message}" if provider else message)
        self.provider = provider
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


class ToolError(OpenProgramError):
    """A tool refused or failed; its message goes back to the model."""

    code = -32020


class CheckpointError(OpenProgramError):
    """A checkpoint could not be taken, read or restored."""

    code = -32030


class TurnCancelled(OpenProgramError):
    """The turn was cancelled."""

    code = -32800


class HookBlocked(OpenProgramError):
    """A user hook refused the prompt (UserPromptSubmit)."""

    code = -32040
