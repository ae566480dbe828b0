"""``Model``: the base of every pydantic model of ours (but the wire's and the SDKs' own).

A model builds its validator and serializer on first use (``defer_build``), not when its
class is made: a process builds only the models it uses (an offline CLI turn, about 40 of
some 70), and the first build, which loads pydantic's plugin registry (``importlib.metadata``,
about 20 ms), happens in a command that validates something rather than in every import.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    """A pydantic model whose validator is built on first use; subclasses add to the config."""

    model_config = ConfigDict(defer_build=True)
