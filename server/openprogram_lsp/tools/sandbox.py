"""The bubblewrap sandbox ``run_command`` runs in (Linux).

Inside: a new PID namespace with a fresh ``/proc`` (no server process is visible), the
workspace bound read-write, the rest of the filesystem read-only, a private ``/tmp``, and
``$OPENPROGRAM_HOME`` plus the user's credential stores not there at all (an empty tmpfs or
``/dev/null`` over each). ``bwrap`` itself starts with a scrubbed environment, so
``/proc/1/environ`` inside holds no key. Network stays on unless the settings turn it off.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from openprogram_lsp.config import Settings
from openprogram_lsp.config.sections.sandbox import SandboxSection
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.fsutil import protected_dirs
from openprogram_lsp.tools.procs import scrubbed_env

SandboxMode = Literal["auto", "required", "off"]

# The user's credential stores (relative to $HOME); none of them is mounted in the sandbox.
HOME_SECRETS = (".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".docker", ".kube",
                ".azure", ".npmrc", ".pypirc", ".config/openprogram-lsp", ".config/gh",
                ".config/gcloud", ".local/share/keyrings", ".password-store")
# Sockets that hand out more than the sandbox allows (the user's agents, the Docker daemon).
HIDDEN_SOCKETS = ("/run/user", "/var/run/docker.sock", "/run/docker.sock")


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """``sandbox: auto | required | off`` and whether commands get the network."""

    mode: SandboxMode = "auto"
    network: bool = True


def sandbox_settings(settings: Settings | None = None) -> SandboxSettings:
    """The ``[sandbox]`` settings of the validated ``settings`` (the defaults without)."""
    section = (settings or Settings.defaults()).get(SandboxSection)
    return SandboxSettings(mode=section.mode, network=section.network)


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether bubblewrap can run here, and if not why."""

    ok: bool
    path: str | None
    reason: str = ""


_PROBED: dict[str, Availability] = {}


def availability() -> Availability:
    """Probe ``bwrap`` once per process: present, and able to make its namespaces here."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Availability(False, None, "bubblewrap (bwrap) is not installed; "
                            "install the Debian/Ubuntu package `bubblewrap`")
    cached = _PROBED.get(bwrap)
    if cached is not None:
        return cached
    try:
        done = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--dev", "/dev",
             "--", "true"], env=scrubbed_env(), capture_output=True, timeout=10, check=False)
        result = Availability(True, bwrap) if done.returncode == 0 else Availability(
            False, bwrap, "bwrap cannot create its namespaces here: "
            + done.stderr.decode("utf-8", "replace").strip()[:300])
    except (OSError, subprocess.TimeoutExpired) as exc:
        result = Availability(False, bwrap, f"bwrap failed to start: {exc}")
    _PROBED[bwrap] = result
    return result


async def availability_async() -> Availability:
    """``availability`` off the event loop (the first probe starts a process)."""
    bwrap = shutil.which("bwrap")
    if bwrap is not None and bwrap in _PROBED:
        return _PROBED[bwrap]
    return await asyncio.to_thread(availability)


@dataclass(frozen=True, slots=True)
class Plan:
    """How one command will run: the argv prefix, or why it runs unsandboxed."""

    sandboxed: bool
    prefix: tuple[str, ...] = ()
    note: str = ""
    network: bool = True


def plan(workspace: Path, settings: SandboxSettings, found: Availability) -> Plan:
    """Decide sandboxed or not; ``required`` without a working bwrap refuses the command."""
    if settings.mode == "off":
        return Plan(False, note="not sandboxed: the sandbox is off (OPENPROGRAM_SANDBOX=off)")
    if not found.ok or found.path is None:
        if settings.mode == "required":
            raise ToolError(f"refused: the sandbox is required but {found.reason}")
        return Plan(False, note=f"not sandboxed: {found.reason}")
    return Plan(True, tuple(bwrap_argv(found.path, workspace, network=settings.network)),
                network=settings.network)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def hidden_paths() -> list[Path]:
    """Everything the sandbox never mounts: our state (the state root and every store's
    directory, wherever the settings put them), the user's secrets, agent sockets."""
    home = Path.home()
    xdg_config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    out = [*protected_dirs(), xdg_config / "openprogram-lsp", *(home / p for p in HOME_SECRETS),
           *(Path(p) for p in HIDDEN_SOCKETS)]
    seen: list[Path] = []
    for p in out:
        for q in (p.absolute(), Path(os.path.realpath(p))):
            if q not in seen and os.path.lexists(q):
                seen.append(q)
    return seen


def bwrap_argv(bwrap: str, workspace: Path, *, network: bool) -> list[str]:
    """The ``bwrap`` command line up to ``--`` for commands run in ``workspace``."""
    ws = Path(os.path.realpath(workspace))
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/dev/shm"]
    if not network:
        argv.append("--unshare-net")
    before: list[Path] = []
    after: list[Path] = []
    for p in hidden_paths():
        # inside the workspace: hidden over the bind; around it: hidden first, then bound into
        (after if _inside(p, ws) else before).append(p)
    for p in before:
        argv += _hide(p)
    argv += ["--bind", str(ws), str(ws)]
    for p in after:
        argv += _hide(p)
    return [*argv, "--chdir", str(ws), "--"]


def _hide(path: Path) -> list[str]:
    if path.is_dir() and not path.is_symlink():
        return ["--tmpfs", str(path)]
    if path.is_symlink():
        return []  # its target is hidden by its own entry (both forms are listed)
    return ["--ro-bind", "/dev/null", str(path)]


def status(settings: Settings | None = None) -> dict[str, object]:
    """What commands will run in, for ``openprogram-lsp sandbox``, health checks and editors.

    ``{"sandboxed", "mode", "network", "bwrap", "message"}``; ``message`` is one line.
    """
    box = sandbox_settings(settings)
    found = availability() if box.mode != "off" else Availability(False, None, "")
    net = "on" if box.network else "off"
    if box.mode == "off":
        message = "sandbox off (OPENPROGRAM_SANDBOX=off): commands run unsandboxed"
    elif found.ok:
        message = f"sandbox on: bubblewrap at {found.path} (mode {box.mode}, network {net})"
    elif box.mode == "required":
        message = f"commands are refused (OPENPROGRAM_SANDBOX=required): {found.reason}"
    else:
        message = f"commands run unsandboxed: {found.reason}"
    return {"sandboxed": box.mode != "off" and found.ok, "mode": box.mode,
            "network": box.network, "bwrap": found.path, "message": message}
