"""A command's start-up with the cyclic garbage collector paused (``openprogram-lsp chat``).

Starting a chat turn imports about 400 modules and builds the app: some 80,000 objects the
collector tracks, almost none of them garbage, and it ran over a hundred collections over
them (gen2 ones too, each over all of them), about 15% of a chat run's CPU. ``start_up``
pauses it while the command starts, then collects once (what the start did leave, a few
thousand objects, is freed) and freezes the rest (``gc.freeze``: the modules, classes and the
app live as long as the process, and later collections leave them out), and resumes it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def start_up() -> Iterator[None]:
    """Pause the collector for the block; after it, collect once, freeze what is left and
    resume (a collector that was off stays off, and nothing is frozen then)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        gc.freeze()
        gc.enable()
