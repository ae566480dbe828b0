"""The private per-workspace checkpoint store (git CLI, private git dir and index)."""

from openprogram_lsp.store.checkpoints.config import DEFAULT_EXCLUDES, CheckpointConfig
from openprogram_lsp.store.checkpoints.store import CheckpointStore

__all__ = ["DEFAULT_EXCLUDES", "CheckpointConfig", "CheckpointStore"]
