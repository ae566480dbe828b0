"""``[sandbox]``: whether run_command runs in bubblewrap, and with the network or not."""

from __future__ import annotations

from typing import ClassVar, Literal

from openprogram_lsp.config.section import EnvVar, Section


class SandboxSection(Section):
    """``mode``: auto (sandbox when bwrap works), required (else refuse), off; ``network``."""

    name: ClassVar[str] = "sandbox"
    env: ClassVar[dict[str, EnvVar]] = {
        "mode": EnvVar("OPENPROGRAM_SANDBOX", "auto, required or off"),
        "network": EnvVar("OPENPROGRAM_SANDBOX_NETWORK", "commands get the network (on/off)"),
    }
    # a project's own config file must never weaken the box its commands run in
    user_only: ClassVar[frozenset[str]] = frozenset({"mode", "network"})

    mode: Literal["auto", "required", "off"] = "auto"
    network: bool = True
