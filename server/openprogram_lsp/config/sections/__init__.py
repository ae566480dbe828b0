"""One module per config section; each defines a ``Section`` subclass (found automatically)."""
