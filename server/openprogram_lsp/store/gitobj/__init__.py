"""One in-process git object layer (on gitdb) for the session stores and the checkpoints."""

from openprogram_lsp.store.gitobj.odb import MissingObject, ObjectDB

__all__ = ["MissingObject", "ObjectDB"]
