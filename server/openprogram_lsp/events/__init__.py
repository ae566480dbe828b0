"""The event layer: asynchronous observation (EventBus) and synchronous consultation (tool gate)."""

from openprogram_lsp.events.bus import Event, EventBus, emit_safe, get_event_bus, make_event

__all__ = ["Event", "EventBus", "emit_safe", "get_event_bus", "make_event"]
