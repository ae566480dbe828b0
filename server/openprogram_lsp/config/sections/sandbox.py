"""``[sandbox]``: whether run_command runs in bubblewrap, with the network or not, and the
process and memory limits of a sandboxed command."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from openprogram_lsp.config.section import EnvVar, Section


class SandboxSection(Section):
    """``mode``: auto (sandbox when bwrap works), required (else refuse), off; ``network``."""

    name: ClassVar[str] = "sandbox"
    env: ClassVar[dict[str, EnvVar]] = {
        "mode": EnvVar("OPENPROGRAM_SANDBOX", "auto, required or off"),
        "network": EnvVar("OPENPROGRAM_SANDBOX_NETWORK", "commands get the network (on/off)"),
        "max_processes": EnvVar("OPENPROGRAM_SANDBOX_MAX_PROCESSES",
                                "processes a sandboxed command may run at once (0: no limit)"),
        "max_memory_mb": EnvVar("OPENPROGRAM_SANDBOX_MAX_MEMORY_MB",
                                "memory of a sandboxed command in MiB (0: no limit)"),
    }
    # a project's own config file must never weaken the box its commands run in
    user_only: ClassVar[frozenset[str]] = frozenset({"mode", "network", "max_processes",
                                                     "max_memory_mb"})

    mode: Literal["auto", "required", "off"] = "auto"
    network: bool = True
    max_processes: int = Field(1024, ge=0, le=4_194_304)
    max_memory_mb: int | None = Field(None, ge=0)  # None: half of the machine's memory
