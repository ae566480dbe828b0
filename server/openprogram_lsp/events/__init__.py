"""The event layer: asynchronous observation (EventBus) and synchronous consultation (tool gate)."""

from openprogram_lsp.events.bus import Event, EventBus, emit_safe, make_event

__all__ = ["Event", "EventBus", "emit_safe", "make_event"]
