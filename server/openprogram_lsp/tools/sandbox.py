"""The bubblewrap sandbox ``run_command`` runs in (Linux).

Inside: a new PID namespace with a fresh ``/proc`` (no server process is visible), the
workspace bound read-write but its ``.git`` and control files (``core.control_files``: what
makes something run later) read-only, missing ones uncreatable, the rest of the filesystem
read-only, a private ``/tmp``, and ``$OPENPROGRAM_HOME`` plus the user's credential stores not
there at all (an empty tmpfs or ``/dev/null`` over each). ``bwrap`` itself starts with a
scrubbed environment, so ``/proc/1/environ`` inside holds no key. Network stays on unless the
settings turn it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from openprogram_lsp.config import Settings
from openprogram_lsp.config.sections.sandbox import SandboxSection
from openprogram_lsp.core.control_files import sandbox_entries
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.fsutil import protected_dirs
from openprogram_lsp.tools.limits import (
    MIB,
    Cgroup,
    Limits,
    enforcement,
    limits_of,
    note,
    rlimit_argv,
)
from openprogram_lsp.tools.procs import scrubbed_env
from openprogram_lsp.tools.sandbox_scan import (
    MAX_DIRS,
    NESTED_DEPTH,
    Nested,
    made_note,
    nested_controls,
)

NO_LIMITS = Limits()
NO_NESTED = Nested()
SandboxMode = Literal["auto", "required", "off"]

# The user's credential stores (relative to $HOME); none of them is mounted in the sandbox.
HOME_SECRETS = (".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".docker", ".kube",
                ".azure", ".npmrc", ".pypirc", ".config/openprogram-lsp", ".config/gh",
                ".config/gcloud", ".local/share/keyrings", ".password-store")
# Sockets that hand out more than the sandbox allows (the user's agents, the Docker daemon).
HIDDEN_SOCKETS = ("/run/user", "/var/run/docker.sock", "/run/docker.sock")


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """``sandbox: auto | required | off``, whether commands get the network, their limits."""

    mode: SandboxMode = "auto"
    network: bool = True
    limits: Limits = NO_LIMITS


def sandbox_settings(settings: Settings | None = None) -> SandboxSettings:
    """The ``[sandbox]`` settings of the validated ``settings`` (the defaults without)."""
    section = (settings or Settings.defaults()).get(SandboxSection)
    return SandboxSettings(mode=section.mode, network=section.network,
                           limits=limits_of(settings))


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
    placeholders: tuple[str, ...] = ()  # mount points it makes for missing control files
    limits: Limits = NO_LIMITS
    inner: tuple[str, ...] = ()  # inside the box, in front of the shell (its rlimits)
    workspace: str = ""  # the real path the box binds
    nested: Nested = NO_NESTED  # repositories and control files below the root, before it ran


def plan(workspace: Path, settings: SandboxSettings, found: Availability,
         also_read: Sequence[Path] = ()) -> Plan:
    """Decide sandboxed or not; ``required`` without a working bwrap refuses the command.
    ``also_read``: directories the command needs that may lie in a directory the box makes
    private (``/tmp``: an interpreter of a checkout there), bound read-only as they are."""
    if settings.mode == "off":
        return Plan(False, note="not sandboxed: the sandbox is off (OPENPROGRAM_SANDBOX=off)")
    if not found.ok or found.path is None:
        if settings.mode == "required":
            raise ToolError(f"refused: the sandbox is required but {found.reason}")
        return Plan(False, note=f"not sandboxed: {found.reason}")
    ws = os.path.realpath(workspace)
    nested = nested_controls(ws)
    argv, made = _argv(found.path, workspace, network=settings.network, nested=nested,
                       also_read=also_read)
    return Plan(True, tuple(argv), network=settings.network, placeholders=tuple(made),
                limits=settings.limits, inner=tuple(rlimit_argv(settings.limits)),
                workspace=ws, nested=nested)


PARTIAL = (f"[the workspace has more than {MAX_DIRS:,} directories in its top "
           f"{NESTED_DEPTH + 1} levels: repositories and control files below its root were held "
           "read-only in the sandbox only where the look reached]")


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
    return _argv(bwrap, workspace, network=network)[0]


PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")  # an empty tmpfs of its own in every box


def _argv(bwrap: str, workspace: Path, *, network: bool, nested: Nested | None = None,
          also_read: Sequence[Path] = ()) -> tuple[list[str], list[str]]:
    """``bwrap_argv`` and the placeholders it makes (see ``read_only_controls``)."""
    ws = Path(os.path.realpath(workspace))
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for d in PRIVATE_DIRS:
        argv += ["--tmpfs", d]
    for extra in also_read:  # only what a private dir covers; before the hides, which win
        real = Path(os.path.realpath(extra))
        if real.is_dir() and any(_inside(real, Path(d)) for d in PRIVATE_DIRS):
            argv += ["--ro-bind", str(real), str(real)]
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
    # the control files before what is hidden in the workspace: a read-only bind of
    # `.openprogram` must not bring back a state directory hidden inside it
    controls, made = read_only_controls(ws, nested)
    argv += controls
    for p in after:
        argv += _hide(p)
    return [*argv, "--chdir", str(ws), "--"], made


_SUBMODULE = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)
_PLACEHOLDERS: dict[str, int] = {}  # placeholder path -> sandboxed commands running with it


def read_only_controls(ws: Path, nested: Nested | None = None) -> tuple[list[str], list[str]]:
    """bwrap arguments that keep ``.git`` and the control files at the workspace root (and
    each submodule's ``.git``, and those ``nested`` found below the root) read-only, and the
    placeholders among them.

    An existing one is bound read-only onto itself (through a symlink: its target, when that
    lies in the workspace; outside it is read-only already). A missing one that must not be
    created (``.git``, ``.vscode``, ``.envrc``...) gets a read-only placeholder: an empty
    tmpfs or ``/dev/null``. bwrap makes its mount point in the real workspace (an empty
    directory or file, visible there while the command runs); ``hold`` counts the commands
    using it and the last one's end removes it.
    """
    args: list[str] = []
    made: list[str] = []
    names = [(".git", True, True), *((c.value, c.match == "dir", c.sandbox == "always")
                                     for c in sandbox_entries())]
    for sub in _submodules(ws):
        names.append((f"{sub}/.git", True, False))
    if nested is None:
        nested = nested_controls(str(ws))
    names += [(os.path.relpath(p, ws), False, False) for p in nested.paths]
    bound: set[str] = set()
    for name, is_dir, always in names:
        path = os.path.join(ws, name)
        real = os.path.realpath(path)
        if not _inside(Path(real), ws) or real == str(ws) or real in bound:
            continue  # outside the workspace: read-only (or hidden) already
        if os.path.lexists(real) and real not in _PLACEHOLDERS:
            args += ["--ro-bind", real, real]
            bound.add(real)
        elif always or real in _PLACEHOLDERS:
            args += (["--tmpfs", real, "--remount-ro", real] if is_dir
                     else ["--ro-bind", "/dev/null", real])
            made.append(real)
    return args, made


def _submodules(ws: Path) -> list[str]:
    """The submodule paths ``.gitmodules`` lists (inside the workspace, no ``..``)."""
    try:
        text = (ws / ".gitmodules").read_text("utf-8", "replace")[:65536]
    except OSError:
        return []
    out = []
    for raw in _SUBMODULE.findall(text):
        rel = raw.strip('"').strip("/")
        if rel and ".." not in rel.split("/") and not os.path.isabs(rel):
            out.append(rel)
    return out[:256]


class Held:
    """One sandboxed command's hold on what it runs with: its placeholders (counted, so the
    last command's end removes each) and its cgroup, when one can be made."""

    def __init__(self, how: Plan) -> None:
        self.how = how
        self.cgroup = Cgroup.make(how.limits) if how.sandboxed else None
        for p in how.placeholders:
            _PLACEHOLDERS[p] = _PLACEHOLDERS.get(p, 0) + 1
        self._done = False
        self._hit: list[str] | None = None  # what the cgroup's counters said at the end
        self._made = ""  # what it made below the root (made_note)

    def attach(self, pid: int) -> None:
        """The box's first process, before it runs anything: into the cgroup."""
        if self.cgroup is not None:
            self.cgroup.attach(pid)

    def limit_note(self, output: str) -> str:
        """The line naming a limit the command ran into ("" when none)."""
        if not self.how.sandboxed:
            return ""
        return note(self.how.limits, self._hit, output)

    def made_note(self) -> str:
        """After ``release``: the line naming repositories and control files the command
        made below the workspace root ("" when none; see ``tools.sandbox_scan``)."""
        return self._made

    def release(self) -> None:
        """Once, after the command's sandbox is gone: remove the cgroup, and each placeholder
        no other command uses if it is still the empty directory or file bwrap made."""
        if self._done:
            return
        self._done = True
        if self.cgroup is not None:
            self._hit = self.cgroup.hit()
            self.cgroup.remove()
        if self.how.sandboxed and self.how.workspace:
            ws = self.how.workspace
            self._made = made_note(ws, self.how.nested, nested_controls(ws))
        for p in self.how.placeholders:
            left = _PLACEHOLDERS.get(p, 1) - 1
            if left > 0:
                _PLACEHOLDERS[p] = left
                continue
            _PLACEHOLDERS.pop(p, None)
            _remove_if_empty(p)


def hold(how: Plan) -> Held:
    """Take the hold of a command about to run as ``how`` says (release it after its end)."""
    return Held(how)


def _remove_if_empty(path: str) -> None:
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode):
            os.rmdir(path)  # only an empty one
        elif stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(path)


def _hide(path: Path) -> list[str]:
    if path.is_dir() and not path.is_symlink():
        return ["--tmpfs", str(path)]
    if path.is_symlink():
        return []  # its target is hidden by its own entry (both forms are listed)
    return ["--ro-bind", "/dev/null", str(path)]


def status(settings: Settings | None = None) -> dict[str, object]:
    """What commands will run in, for ``openprogram-lsp sandbox``, health checks and editors.

    ``{"sandboxed", "mode", "network", "limits", "bwrap", "message"}``; ``message`` is one
    line.
    """
    box = sandbox_settings(settings)
    found = availability() if box.mode != "off" else Availability(False, None, "")
    net = "on" if box.network else "off"
    if box.mode == "off":
        message = "sandbox off (OPENPROGRAM_SANDBOX=off): commands run unsandboxed"
    elif found.ok:
        message = (f"sandbox on: bubblewrap at {found.path} (mode {box.mode}, network {net}, "
                   f"at most {box.limits.describe()} per command, "
                   f"{enforcement(box.limits)})")
    elif box.mode == "required":
        message = f"commands are refused (OPENPROGRAM_SANDBOX=required): {found.reason}"
    else:
        message = f"commands run unsandboxed: {found.reason}"
    return {"sandboxed": box.mode != "off" and found.ok, "mode": box.mode,
            "network": box.network, "limits": {"processes": box.limits.processes,
                                               "memory_mb": box.limits.memory // MIB},
            "bwrap": found.path, "message": message}
