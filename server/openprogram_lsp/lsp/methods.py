"""Every method name of the wire contract, by direction, read off ``wire.py``'s tables (nothing
here is kept by hand)."""

from __future__ import annotations

from openprogram_lsp.lsp import wire

CLIENT_REQUESTS: tuple[str, ...] = tuple(wire.REQUESTS)
"""Requests an editor sends to the server."""

CLIENT_NOTIFICATIONS: tuple[str, ...] = ()
"""Custom notifications an editor sends (none: cancelling uses ``$/cancelRequest``)."""

SERVER_REQUESTS: tuple[str, ...] = tuple(wire.SERVER_REQUESTS)
"""Requests the server sends to editors that declare ``experimental.openprogram``."""

SERVER_NOTIFICATIONS: tuple[str, ...] = tuple(wire.NOTIFICATIONS)
"""Notifications the server sends."""

EVENT_TYPES: tuple[str, ...] = tuple(wire.EVENT_DATA)
"""Event types clients handle (others, such as ``model.response_started``, may also arrive and
can be ignored)."""

ALL_CUSTOM: frozenset[str] = frozenset(
    CLIENT_REQUESTS + CLIENT_NOTIFICATIONS + SERVER_REQUESTS + SERVER_NOTIFICATIONS)


def as_table() -> dict[str, list[str]]:
    """The method table as JSON-ready lists."""
    return {
        "clientRequests": list(CLIENT_REQUESTS),
        "clientNotifications": list(CLIENT_NOTIFICATIONS),
        "serverRequests": list(SERVER_REQUESTS),
        "serverNotifications": list(SERVER_NOTIFICATIONS),
        "eventTypes": list(EVENT_TYPES),
    }
